// fast-check arbitraries for malformed API answers. Each case is a valid body broken in known
// places: `fields` names every place broken, so a test can demand that the client's issues name them
// ("pending_sol", "breakdown[0].vault", "[3].rank", or "body" for the body as a whole).
import fc from 'fast-check';

/** JSON text inserted verbatim: a number's exact text, or something that is not JSON at all. */
export class Raw {
  constructor(readonly text: string) {}
}
export type J = null | boolean | string | Raw | J[] | { [key: string]: J };
type Obj = { [key: string]: J };

export function jsonText(v: J): string {
  if (v instanceof Raw) return v.text;
  if (v === null || typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  return `{${Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`).join(',')}}`;
}

/** A broken body and the fields it breaks. */
export interface BadCase {
  body: string;
  fields: string[];
  /** What was done, for the failure message. */
  what: string[];
}

/** One way of breaking one place; `apply` mutates the object in place. */
interface Breakage {
  field: string;
  what: string;
  apply(o: Obj): void;
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
export const base58Address = fc.string({ unit: fc.constantFrom(...BASE58), minLength: 32, maxLength: 44 });

const num = (text: string) => new Raw(text);
const lamportsText = (l: bigint): string => {
  const whole = l / 1_000_000_000n;
  const frac = (l % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return frac === '' ? whole.toString() : `${whole}.${frac}`;
};

// ------------------------------------------------------------------------------------------------
// valid bodies

const validAmount = (min: bigint, max: bigint) =>
  fc.tuple(fc.bigInt({ min, max }), fc.boolean()).map(([l, asNumber]): J => (asNumber ? num(lamportsText(l)) : lamportsText(l)));

const validEpoch = fc
  .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

const breakdownEntry = fc.record(
  { vault: base58Address, volume: fc.nat().map((n): J => num(String(n))), score: fc.nat().map((n): J => num(String(n))) },
  { requiredKeys: ['vault'] },
);

/** A summary the client accepts for `address`: optional fields sometimes missing, unknown ones sometimes present. */
export const validSummary = (address: string): fc.Arbitrary<Obj> =>
  fc
    .record({
      epoch: validEpoch,
      pending_sol: validAmount(1n, 10n ** 13n),
      lifetime_sol: optional(fc.oneof(validAmount(0n, 10n ** 15n), fc.constant(null))),
      rank: optional(fc.integer({ min: 1, max: 1_000_000 }).chain((r) => fc.constantFrom<J>(num(String(r)), String(r)))),
      tier: optional(fc.constantFrom('bronze', 'silver', 'gold', '')),
      breakdown: optional(fc.array(breakdownEntry, { maxLength: 4 })),
      extra: optional(fc.jsonValue({ maxDepth: 2 })),
    })
    .map((r) => {
      const o: Obj = { address, epoch: r.epoch, pending_sol: r.pending_sol };
      if (r.lifetime_sol !== undefined) o['lifetime_sol'] = r.lifetime_sol;
      if (r.rank !== undefined) o['rank'] = r.rank;
      if (r.tier !== undefined) o['tier'] = r.tier;
      if (r.breakdown !== undefined) o['breakdown'] = r.breakdown.map((b) => ({ ...b }));
      // Unknown fields are kept, never an error (SPEC §1).
      if (r.extra !== undefined) o['unknown_field'] = new Raw(JSON.stringify(r.extra));
      return o;
    });

// ------------------------------------------------------------------------------------------------
// bad values, by kind

const huge = (n: number, unit = '9') => unit.repeat(n);
// Mostly a few kB (cheap to push through 10,000 cases), now and then a 100–200 kB one.
const hugeString = fc
  .oneof({ weight: 9, arbitrary: fc.integer({ min: 65, max: 5_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 100_000, max: 200_000 }) })
  .map((n) => 'x'.repeat(n));

const WRONG_TYPES: J[] = [true, false, [], ['1'], {}, { value: '1' }, { nested: { deeper: [1] } as unknown as J }];
const NAN_LIKE: J[] = ['NaN', '-NaN', 'Infinity', '-Infinity', 'inf', 'null', 'undefined', 'true', '', ' ', '1,5', '1 000', '0x10', '1_000', '1e', '.', '--1', '+1', '$1', '½', '１'];
// `-0` is zero, and digits below the lamport (`1e-300`, `0.0000000001`) are rounded toward zero: a
// float-serialising server writes both, and they are read, not refused (src/amount.ts parseServerSol).
const NEGATIVE: J[] = ['-1', '-0.000000001', num('-1'), num('-0.5'), num('-1e3')];
const EXTREME: J[] = [num('1e300'), '1e300', num('1E+300'), num('18446744073.709551616'), num(huge(30)), huge(100)];

const badAmount = fc.oneof(
  fc.constantFrom(...WRONG_TYPES),
  fc.constantFrom(...NAN_LIKE),
  fc.constantFrom(...NEGATIVE),
  fc.constantFrom(...EXTREME),
  fc.integer({ min: 1, max: 10 ** 9 }).map((n): J => num(`-${n}`)),
  fc.integer({ min: 22, max: 5_000 }).map((n): J => huge(n)),
  hugeString,
);
const badRequiredAmount = fc.oneof({ arbitrary: badAmount, weight: 9 }, { arbitrary: fc.constant<J>(null), weight: 1 });

const BAD_EPOCHS: J[] = [
  '2026-02-30', '2025-02-29', '2026-13-01', '2026-00-10', '2026-04-31', '0000-00-00', 'yesterday', 'today', '',
  '2026-1-5', '20260101', '2026/01/01', ' 2026-01-01', '2026-01-01 ', '2026-01-01T00:00:00Z', '26-01-01', '+2026-01-01',
  num('20260101'), num('1767225600'), true, null, [], ['2026-01-01'], { date: '2026-01-01' },
];
const badEpoch = fc.oneof(fc.constantFrom(...BAD_EPOCHS), hugeString, fc.string({ maxLength: 12 }).filter((s) => !/^\d{4}-\d{2}-\d{2}$/.test(s)));

const badRank = fc.oneof(
  fc.constantFrom<J>(num('0'), num('-1'), num('1.5'), num('1e3'), num('1.0'), '0', '-3', '1.5', 'first', '', true, [], {}, num(huge(17)), huge(17), num('1e300')),
  fc.integer({ min: -1_000_000, max: 0 }).map((n): J => num(String(n))),
  hugeString,
);
/** In a summary, rank 0 is how the real service writes "unranked": read as no rank, not refused. */
const badSummaryRank = badRank.filter((v) => !(v instanceof Raw ? v.text === '0' : v === '0'));
/** Scores and volumes: a number or a string spelling one; anything else is garbage. */
const badNumberText = fc.oneof(
  fc.constantFrom<J>('high', 'NaN', 'Infinity', '-Infinity', '', ' 1', '1 ', '0x1F', '1,5', '12abc', num(`1e${'9'.repeat(5)}`), true, [], {}, { value: num('1') }),
  fc.integer({ min: 65, max: 5_000 }).map((n): J => huge(n)),
  hugeString,
);
const badString = fc.constantFrom<J>(num('5'), num('-1'), true, false, [], {}, { name: 'gold' });
const badRequiredString = fc.constantFrom<J>(num('5'), true, [], {}, '', null);

// ------------------------------------------------------------------------------------------------
// summary breakages

const set = (field: string, what: string, value: J): Breakage => ({ field, what: `${field} = ${what}`, apply: (o) => void (o[field] = value) });
const preview = (v: J) => {
  const t = jsonText(v);
  return t.length > 30 ? `${t.slice(0, 30)}…(${t.length} chars)` : t;
};

const breakField = (field: string, bad: fc.Arbitrary<J>) => bad.map((v) => set(field, preview(v), v));
const missing = (field: string): Breakage => ({ field, what: `${field} missing`, apply: (o) => void delete o[field] });

/** An entry of `breakdown` made bad: index chosen among existing entries (one is added if none). */
const breakdownBreakage = fc
  .tuple(
    fc.nat({ max: 3 }),
    fc.oneof(
      fc.constantFrom<['vault' | 'volume' | 'score' | 'entry', J | undefined]>(['vault', undefined], ['entry', num('1')], ['entry', 'vault'], ['entry', null], ['entry', []]),
      badRequiredString.map((v): ['vault', J] => ['vault', v]),
      badNumberText.chain((v) => fc.constantFrom<['volume' | 'score', J]>(['volume', v], ['score', v])),
    ),
  )
  .map(([i, [key, value]]): Breakage => ({
    field: 'breakdown',
    what: `breakdown[i].${key} = ${value === undefined ? 'missing' : preview(value)}`,
    apply: (o) => {
      const list = Array.isArray(o['breakdown']) ? (o['breakdown']) : [];
      if (list.length === 0) list.push({ vault: 'So11111111111111111111111111111111111111112' });
      const idx = i % list.length;
      if (key === 'entry') list[idx] = value ?? null;
      else {
        const entry = { ...(list[idx] as Obj) };
        if (value === undefined) delete entry[key];
        else entry[key] = value;
        list[idx] = entry;
      }
      o['breakdown'] = list;
    },
  }));

/** Wrong address echoed: another valid-looking address, or the right one slightly off. */
const wrongAddress = (expected: string): fc.Arbitrary<Breakage> =>
  fc
    .oneof(
      base58Address.filter((a) => a !== expected),
      fc.constantFrom(` ${expected}`, `${expected} `, expected.slice(0, -1), `${expected}1`, expected.toLowerCase(), expected.toUpperCase(), `${expected}\n`, `${expected}\u0000`).filter((a) => a !== expected),
      hugeString,
      fc.constantFrom(expected.repeat(3)),
    )
    .map((a) => set('address', preview(a), a));

/** Breakages of one root field each (so several can be combined without overlapping). */
export const fieldBreakage = (expected: string): fc.Arbitrary<Breakage> =>
  fc.oneof(
    fc.oneof(badRequiredString.map((v) => set('address', preview(v), v)), fc.constant(missing('address')), wrongAddress(expected)),
    fc.oneof(breakField('epoch', badEpoch), fc.constant(missing('epoch'))),
    fc.oneof(breakField('pending_sol', badRequiredAmount), fc.constant(missing('pending_sol'))),
    breakField('lifetime_sol', badAmount),
    breakField('rank', badSummaryRank),
    breakField('tier', badString),
    fc.oneof(breakField('breakdown', fc.constantFrom<J>('vaults', num('3'), true, {}, { vault: 'x' })), breakdownBreakage),
  );

/** The body as a whole is wrong: not JSON, not an object, or the summary nested one level down. */
const bodyBreakage = (o: Obj): fc.Arbitrary<{ body: string; fields: string[]; what: string }> =>
  fc.oneof(
    fc.constantFrom(
      { body: '', fields: ['body'], what: 'empty body' },
      { body: 'null', fields: ['body'], what: 'null' },
      { body: '[]', fields: ['body'], what: 'empty array' },
      { body: '"summary"', fields: ['body'], what: 'a string' },
      { body: '42', fields: ['body'], what: 'a number' },
      { body: jsonText([o]), fields: ['body'], what: 'the summary inside an array' },
      { body: jsonText(o).slice(0, -1), fields: ['body'], what: 'truncated JSON' },
      { body: jsonText(o).replace(/^\{/, '{"pending_sol":NaN,'), fields: ['body'], what: 'bare NaN token' },
      { body: jsonText(o).replace(/^\{/, '{"pending_sol":true,'), fields: ['body'], what: 'duplicate key with another value' },
      { body: `${jsonText(o)} trailing`, fields: ['body'], what: 'trailing garbage' },
      { body: '<html>502 Bad Gateway</html>', fields: ['body'], what: 'an HTML error page with status 200' },
    ),
    // Extra nesting in an unknown field: parses, but would overflow the stack when stored.
    fc.integer({ min: 64, max: 20_000 }).map((d) => ({ body: jsonText({ ...o, deep: new Raw(`${'['.repeat(d)}${']'.repeat(d)}`) }), fields: ['body'], what: `unknown field nested ${d} levels` })),
    // The amount only under "__proto__": kept as an ordinary key, never read as pending_sol.
    fc.constant(o).map(({ pending_sol: pending, ...rest }) => ({ body: jsonText({ ['__proto__']: { pending_sol: pending ?? '1' }, ...rest }), fields: ['pending_sol'], what: 'pending_sol under __proto__' })),
    // Extra nesting: the whole summary one level down, so every required field is missing on top.
    fc.constantFrom('data', 'summary', 'result', 'wallet').map((key) => ({ body: jsonText({ [key]: o }), fields: ['address', 'epoch', 'pending_sol'], what: `nested under ${key}` })),
  );

/** A summary broken in exactly one place: one field, or the body as a whole. */
export const oneBadSummary = (expected: string): fc.Arbitrary<BadCase> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.tuple(validSummary(expected), fieldBreakage(expected)).map(([o, b]) => (b.apply(o), { body: jsonText(o), fields: [b.field], what: [b.what] })) },
    { weight: 1, arbitrary: validSummary(expected).chain(bodyBreakage).map((c) => ({ body: c.body, fields: c.fields, what: [c.what] })) },
  );

/** A summary broken in two to four different fields at once. */
export const manyBadSummary = (expected: string): fc.Arbitrary<BadCase> =>
  fc
    .tuple(validSummary(expected), fc.uniqueArray(fieldBreakage(expected), { minLength: 2, maxLength: 4, selector: (b) => b.field }))
    .map(([o, bs]) => {
      for (const b of bs) b.apply(o);
      return { body: jsonText(o), fields: bs.map((b) => b.field), what: bs.map((b) => b.what) };
    });

// ------------------------------------------------------------------------------------------------
// leaderboards

const validLeaderboard = fc.array(
  fc.record({ address: base58Address, score: fc.nat(), total: fc.bigInt({ min: 0n, max: 10n ** 15n }), asNumber: fc.boolean() }),
  { minLength: 1, maxLength: 25 },
).map((rows) =>
  rows.map((r, i): Obj => ({
    rank: num(String(i + 1)),
    address: r.address,
    score: num(String(r.score)),
    total_rewards_sol: r.asNumber ? num(lamportsText(r.total)) : lamportsText(r.total),
  })),
);

const badAddress = fc.oneof(
  fc.constantFrom<J>('', 'not-an-address', 'O0Il'.repeat(10), '0x52908400098527886E0F7030069857D2E4169EE7', num('12345'), true, null, [], {}),
  fc.string({ maxLength: 31, unit: fc.constantFrom(...BASE58) }),
  hugeString,
);

type LbBreak = (rows: Obj[], i: number) => { rows: J; field: string; what: string };

/** Ranks 1..n again after entries were added or moved. */
const renumber = (rows: Obj[], from = 1) => rows.forEach((r, j) => void (r['rank'] = num(String(j + from))));

const lbBreakages: fc.Arbitrary<LbBreak> = fc.oneof(
  fc.constant<LbBreak>((rows, i) => {
    // Duplicate rank: entry j repeats the rank of the one before it.
    if (rows.length < 2) rows.push({ ...rows[0]! });
    renumber(rows);
    const j = Math.max(1, i % rows.length);
    rows[j]!['rank'] = rows[j - 1]!['rank']!;
    return { rows, field: `[${j}].rank`, what: `duplicate rank at ${j}` };
  }),
  fc.constant<LbBreak>((rows, i) => {
    if (i < 2) {
      renumber(rows, 2); // ascending, but from 2
      return { rows, field: '[0].rank', what: 'first rank not 1' };
    }
    rows[i]!['rank'] = num(String(i - 1)); // one step backwards
    return { rows, field: `[${i}].rank`, what: `rank going back at ${i}` };
  }),
  badRank.map((v): LbBreak => (rows, i) => ((rows[i]!['rank'] = v), { rows, field: `[${i}].rank`, what: `rank = ${preview(v)}` })),
  fc.constant<LbBreak>((rows, i) => (delete rows[i]!['rank'], { rows, field: `[${i}].rank`, what: 'rank missing' })),
  badAddress.map((v): LbBreak => (rows, i) => ((rows[i]!['address'] = v), { rows, field: `[${i}].address`, what: `address = ${preview(v)}` })),
  fc.constant<LbBreak>((rows, i) => (delete rows[i]!['address'], { rows, field: `[${i}].address`, what: 'address missing' })),
  badNumberText.map((v): LbBreak => (rows, i) => ((rows[i]!['score'] = v), { rows, field: `[${i}].score`, what: `score = ${preview(v)}` })),
  badAmount.map((v): LbBreak => (rows, i) => ((rows[i]!['total_rewards_sol'] = v), { rows, field: `[${i}].total_rewards_sol`, what: `total = ${preview(v)}` })),
  fc.constantFrom<J>(null, num('1'), 'entry', [], [num('1')]).map((v): LbBreak => (rows, i) => ((rows[i] = v as Obj), { rows, field: `[${i}]`, what: `entry = ${preview(v)}` })),
  fc.constantFrom<J>(null, {}, 'leaderboard').map((v): LbBreak => () => ({ rows: v, field: 'body', what: `body = ${preview(v)}` })),
  fc.constantFrom('entries', 'data', 'leaderboard').map((k): LbBreak => (rows) => ({ rows: { [k]: rows }, field: 'body', what: `nested under ${k}` })),
  fc.constant<LbBreak>((rows) => ({ rows: new Raw(jsonText(rows).slice(0, -1)), field: 'body', what: 'truncated JSON' })),
);

/** A leaderboard broken in one place. */
export const badLeaderboard: fc.Arbitrary<BadCase> = fc
  .tuple(validLeaderboard, fc.nat(), lbBreakages)
  .map(([rows, n, brk]) => {
    const r = brk(rows, n % rows.length);
    return { body: jsonText(r.rows), fields: [r.field], what: [r.what] };
  });

export { validLeaderboard };
