// The split of wallets among live daemons: tables of the cases a cluster meets (start, join, leave,
// a dead holder, a wallet dropped from the list), then properties over random clusters: a partition,
// even to ±1, a fixed point once reached, and the fewest moves on a join or a leave.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assignShares, shareFor, type ShareInput } from '../../src/cluster/share.js';

const wallets = (n: number): string[] => Array.from({ length: n }, (_, i) => `w${String(i).padStart(2, '0')}`);

/** The split as plain data: daemon → its addresses. */
function split(input: ShareInput): Record<string, string[]> {
  return Object.fromEntries(assignShares(input));
}

/** Owners as the split leaves them: what the next read would show once every daemon acted. */
function ownersOf(assignment: Map<string, string[]>): Map<string, string> {
  const owners = new Map<string, string>();
  for (const [d, as] of assignment) for (const a of as) owners.set(a, d);
  return owners;
}

describe('assignShares', () => {
  it.each<[string, ShareInput, Record<string, string[]>]>([
    ['nobody live: nothing to split', { live: [], addresses: wallets(3), owners: new Map() }, {}],
    ['no wallets: everyone empty', { live: ['a', 'b'], addresses: [], owners: new Map() }, { a: [], b: [] }],
    [
      'a fresh cluster deals in address order, the extra one to the first id',
      { live: ['b', 'a'], addresses: wallets(5), owners: new Map() },
      { a: ['w00', 'w01', 'w02'], b: ['w03', 'w04'] },
    ],
    [
      'one daemon holding everything keeps its ceiling and hands on the rest (the lowest addresses kept)',
      { live: ['a', 'b'], addresses: wallets(5), owners: new Map(wallets(5).map((w) => [w, 'b'])) },
      { a: ['w03', 'w04'], b: ['w00', 'w01', 'w02'] },
    ],
    [
      'the daemon already at the ceiling keeps its extra wallet, whatever its rank',
      {
        live: ['a', 'b'],
        addresses: wallets(5),
        owners: new Map([
          ['w00', 'b'],
          ['w01', 'b'],
          ['w02', 'b'],
          ['w03', 'a'],
          ['w04', 'a'],
        ]),
      },
      { a: ['w03', 'w04'], b: ['w00', 'w01', 'w02'] },
    ],
    [
      'a holder that is not live counts as nobody',
      { live: ['a'], addresses: wallets(2), owners: new Map([['w00', 'dead']]) },
      { a: ['w00', 'w01'] },
    ],
    [
      'an address no longer in the list is nobody’s to keep',
      { live: ['a', 'b'], addresses: ['w01', 'w02'], owners: new Map([['w00', 'a'], ['w01', 'a']]) },
      { a: ['w01'], b: ['w02'] },
    ],
    [
      'duplicates in the inputs are one daemon and one wallet',
      { live: ['a', 'a'], addresses: ['w00', 'w00'], owners: new Map() },
      { a: ['w00'] },
    ],
  ])('%s', (_name, input, expected) => {
    expect(split(input)).toEqual(expected);
  });

  it('a third daemon joining takes only its own share: 10 wallets 5/5 → 4/3/3 moves 3', () => {
    const before = assignShares({ live: ['a', 'b'], addresses: wallets(10), owners: new Map() });
    const after = assignShares({ live: ['a', 'b', 'c'], addresses: wallets(10), owners: ownersOf(before) });
    expect(after.get('c')).toHaveLength(3);
    expect(moved(before, after)).toEqual(after.get('c'));
  });

  it('a daemon leaving moves only its wallets', () => {
    const before = assignShares({ live: ['a', 'b', 'c'], addresses: wallets(10), owners: new Map() });
    const owners = ownersOf(before);
    const after = assignShares({ live: ['a', 'c'], addresses: wallets(10), owners });
    expect(moved(before, after).sort()).toEqual(before.get('b'));
  });

  it('shareFor is the daemon’s part, and nothing for a daemon not live', () => {
    const input: ShareInput = { live: ['a', 'b'], addresses: wallets(4), owners: new Map() };
    expect(shareFor('b', input)).toEqual(['w02', 'w03']);
    expect(shareFor('z', input)).toEqual([]);
  });
});

/** The addresses whose holder changed between two splits (present in both). */
function moved(before: Map<string, string[]>, after: Map<string, string[]>): string[] {
  const was = ownersOf(before);
  const now = ownersOf(after);
  return [...now].filter(([a, d]) => was.has(a) && was.get(a) !== d).map(([a]) => a).sort();
}

const arbCluster = fc
  .record({
    daemons: fc.uniqueArray(fc.stringMatching(/^[a-z]{1,3}$/), { minLength: 1, maxLength: 6 }),
    n: fc.integer({ min: 0, max: 40 }),
    // For each wallet: held by daemon i (mod the count), by a dead daemon, or by nobody.
    holders: fc.array(fc.oneof(fc.nat(10), fc.constant(-1), fc.constant(-2)), { maxLength: 40 }),
  })
  .map(({ daemons, n, holders }) => {
    const addresses = wallets(n);
    const owners = new Map<string, string>();
    addresses.forEach((a, i) => {
      const h = holders[i] ?? -1;
      if (h === -2) owners.set(a, 'dead-daemon');
      else if (h >= 0) owners.set(a, daemons[h % daemons.length] as string);
    });
    return { live: daemons, addresses, owners } satisfies ShareInput;
  });

describe('assignShares, for any cluster', () => {
  it('splits every wallet to exactly one live daemon, evenly to ±1', () => {
    fc.assert(
      fc.property(arbCluster, (input) => {
        const s = assignShares(input);
        const all = [...s.values()].flat();
        expect(all.sort()).toEqual([...input.addresses].sort());
        const sizes = [...s.values()].map((x) => x.length);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('keeps what a daemon holds up to its share: a reached split is a fixed point', () => {
    fc.assert(
      fc.property(arbCluster, (input) => {
        const once = assignShares(input);
        const twice = assignShares({ ...input, owners: ownersOf(once) });
        expect(Object.fromEntries(twice)).toEqual(Object.fromEntries(once));
      }),
    );
  });

  it('never takes a wallet from a daemon below its share', () => {
    fc.assert(
      fc.property(arbCluster, (input) => {
        const s = assignShares(input);
        const low = Math.floor(input.addresses.length / input.live.length);
        for (const [a, d] of input.owners) {
          const held = [...input.owners.values()].filter((x) => x === d).length;
          if (s.has(d) && held <= low) expect(s.get(d)).toContain(a);
        }
      }),
    );
  });

  it('a join moves exactly the newcomer’s share, a leave exactly the leaver’s wallets', () => {
    fc.assert(
      fc.property(arbCluster, fc.stringMatching(/^[A-Z]{1,2}$/), (input, newcomer) => {
        const settled = assignShares(input);
        const joined = assignShares({ ...input, live: [...input.live, newcomer], owners: ownersOf(settled) });
        expect(moved(settled, joined)).toEqual(joined.get(newcomer));

        if (input.live.length < 2) return;
        const leaver = input.live[0] as string;
        const left = assignShares({ ...input, live: input.live.slice(1), owners: ownersOf(settled) });
        expect(moved(settled, left)).toEqual(settled.get(leaver));
      }),
    );
  });

  it('is the same whatever order the inputs come in', () => {
    fc.assert(
      fc.property(arbCluster, (input) => {
        const shuffled: ShareInput = {
          live: [...input.live].reverse(),
          addresses: [...input.addresses].reverse(),
          owners: new Map([...input.owners].reverse()),
        };
        expect(Object.fromEntries(assignShares(shuffled))).toEqual(Object.fromEntries(assignShares(input)));
      }),
    );
  });
});
