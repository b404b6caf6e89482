// Issue 11, items 8 and 9, through the CLI and a real daemon process against the sandbox:
// - one daemon per state file however `state.path` spells it (a symlink, a `..`): exit 75;
// - an existing state file that is empty or not autoclaim's is refused, exit 1 naming it,
//   by `once` and by the read-only `status` and `actions`, with no request sent;
// - the `-wal` deleted under a running `run`, then kill -9: a fixed deposit is never sent twice.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildOnce } from '../e2e/build.js';
import { runCli, spawnCli, type Child } from '../e2e/helpers.js';
import { audit, crashWorld, readState, SOL, type CrashWorld } from './crash-harness.js';

/** A fixed deposit once pending reaches 0.5 SOL: nothing about it changes if it runs twice. */
const FIXED_DEPOSIT = `  - name: fixed
    when: { pending_sol: { gte: 0.5 } }
    do: [{ deposit: { symbol: SOL2X, amount: 0.25 } }]
`;

beforeAll(() => buildOnce(), 120_000);

const worlds: CrashWorld[] = [];
const children: Child[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await c.stop();
  for (const w of worlds.splice(0)) await w.close();
});

async function world(pendingLamports = 1n * SOL): Promise<CrashWorld> {
  const w = await crashWorld({ names: ['alpha'], rules: FIXED_DEPOSIT, pendingLamports });
  // The deposit spends what the wallet holds.
  w.sandbox.world.setWallet(w.wallets[0]!.address, { balanceLamports: 1n * SOL });
  worlds.push(w);
  return w;
}

function daemon(w: CrashWorld, config = w.config): Child {
  const c = spawnCli(['run', '--config', config], { cwd: w.dir });
  children.push(c);
  return c;
}

/** The same config with `state.path` spelled otherwise. */
function respelled(w: CrashWorld, name: string, statePath: string): string {
  const file = join(w.dir, `${name}.yaml`);
  const yaml = readFileSync(w.config, 'utf8');
  if (!yaml.includes('  path: ./state/autoclaim.db\n')) throw new Error('the test config no longer sets state.path as expected');
  writeFileSync(file, yaml.replace('  path: ./state/autoclaim.db\n', `  path: ${statePath}\n`));
  return file;
}

const deposits = (w: CrashWorld) => w.sandbox.ledger().filter((e) => e.op === 'deposit');

describe('one daemon per state file, however its path is spelled', () => {
  it('a second instance through a symlinked directory, a symlinked file or a `..` spelling exits 75', async () => {
    const w = await world(0n);
    const d = daemon(w);
    await d.waitFor((e) => e.event === 'daemon.started');
    symlinkSync(join(w.dir, 'state'), join(w.dir, 'linked-state'));
    symlinkSync(join(w.dir, 'state', 'autoclaim.db'), join(w.dir, 'alias.db'));
    const spellings = {
      dirLink: respelled(w, 'dir-link', './linked-state/autoclaim.db'),
      fileLink: respelled(w, 'file-link', './alias.db'),
      dotDot: respelled(w, 'dot-dot', './state/../state/./autoclaim.db'),
    };
    for (const [name, config] of Object.entries(spellings)) {
      const second = await runCli(['once', '--config', config], { cwd: w.dir });
      expect(second.code, `${name}: ${second.stderr}`).toBe(75);
      expect(second.stderr).toMatch(new RegExp(`in use by another autoclaim \\(pid ${d.proc.pid} `));
    }
    // Nothing signed by the refused instances; the daemon is unaffected and stops cleanly.
    expect(w.sandbox.ledger()).toEqual([]);
    d.proc.kill('SIGTERM');
    expect((await d.exited).code).toBe(0);
  });
});

describe('an existing state file that is not autoclaim’s is refused, exit 1 naming it', () => {
  const cases: Record<string, { make: (file: string) => void; says: RegExp }> = {
    'an empty file': { make: (file) => writeFileSync(file, '', { mode: 0o600 }), says: /is an empty file \(0 bytes\)/ },
    'an empty SQLite database': {
      make: (file) => {
        const db = new Database(file);
        db.exec('CREATE TABLE t (x); DROP TABLE t;');
        db.close();
      },
      says: /is an empty SQLite database/,
    },
    'another program’s database': {
      make: (file) => {
        const db = new Database(file);
        db.exec('CREATE TABLE invoices (id INTEGER PRIMARY KEY)');
        db.close();
      },
      says: /is a SQLite database autoclaim did not write \(tables: invoices\)/,
    },
  };

  it.each(Object.keys(cases))('%s: once, status and actions refuse it; nothing is sent, nothing written', async (name) => {
    const { make, says } = cases[name]!;
    const w = await world();
    mkdirSync(dirname(w.statePath), { recursive: true, mode: 0o700 });
    make(w.statePath);
    const before = readFileSync(w.statePath);
    for (const argv of [['once'], ['status'], ['actions']]) {
      const r = await runCli([...argv, '--config', w.config], { cwd: w.dir });
      expect(r.code, `${argv[0]}: ${r.stderr}`).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines.filter((l) => l.includes(w.statePath))).toHaveLength(1);
      expect(r.stderr).toMatch(says);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(w.sandbox.stats().total).toBe(0);
    expect(readFileSync(w.statePath).equals(before)).toBe(true);
    expect(existsSync(`${w.statePath}-wal`)).toBe(false);

    // Moving it away is how an operator starts afresh: then the state is created, and used.
    rmSync(w.statePath);
    expect((await runCli(['once', '--config', w.config], { cwd: w.dir })).code).toBe(0);
    expect(deposits(w)).toHaveLength(1);
  });
});

describe('the -wal deleted under a running daemon (issue 11, item 9)', () => {
  it('after the deposit went out: kill -9 and a restart never send it again', async () => {
    const w = await world();
    const d = daemon(w);
    await d.waitFor((e) => e.event === 'action.acknowledged' && e.kind === 'deposit');
    rmSync(`${w.statePath}-wal`);
    // Let it keep polling (and committing into the deleted file) for a moment, then kill it.
    const polled = d.events().length;
    await d.waitFor((e, i) => e.event === 'poll.ok' && i >= polled);
    d.proc.kill('SIGKILL');
    expect((await d.exited).signal).toBe('SIGKILL');

    // The deposit's `sending` record was in the database file itself: the restart finds the step
    // in flight and holds it as unknown, for an operator; it neither plans nor sends it again.
    const restart = await runCli(['once', '--config', w.config], { cwd: w.dir });
    const again = await runCli(['once', '--config', w.config], { cwd: w.dir });
    expect(deposits(w)).toHaveLength(1);
    expect(restart.events.some((e) => e.event === 'action.unknown' && e.kind === 'deposit')).toBe(true);
    expect(again.events.some((e) => e.event === 'action.sent')).toBe(false);
    expect(audit(w.sandbox.ledger(), readState(w.statePath), { settled: true }).violations).toEqual([]);
  });

  it('before the deposit: the daemon refuses to record it (STATE_REPLACED), sends nothing; after kill -9 it goes out once', async () => {
    const w = await world(0n);
    const d = daemon(w);
    await d.waitFor((e) => e.event === 'poll.ok');
    rmSync(`${w.statePath}-wal`);
    w.sandbox.world.setWallet(w.wallets[0]!.address, { pendingLamports: 1n * SOL });

    const replaced = await d.waitFor((e) => e.event === 'state.replaced');
    expect(replaced).toMatchObject({ level: 'error', role: 'WAL', how: 'deleted' });
    await d.waitFor((e) => e.event === 'state.write_failed');
    // And it stays that way, turn after turn.
    const seen = d.events().length;
    await d.waitFor((e, i) => e.event === 'state.write_failed' && i >= seen);
    expect(d.events().filter((e) => e.event === 'state.replaced')).toHaveLength(1);
    expect(d.events().some((e) => e.event === 'action.sent')).toBe(false);
    expect(w.sandbox.ledger()).toEqual([]);

    d.proc.kill('SIGKILL');
    await d.exited;
    const restart = await runCli(['once', '--config', w.config], { cwd: w.dir });
    expect(restart.code, restart.stderr).toBe(0);
    await runCli(['once', '--config', w.config], { cwd: w.dir });
    expect(deposits(w)).toHaveLength(1);
  });

  it('the database swapped for a copy under the daemon: it sends nothing more', async () => {
    const w = await world(0n);
    const d = daemon(w);
    await d.waitFor((e) => e.event === 'poll.ok');
    copyFileSync(w.statePath, `${w.statePath}.restored`);
    rmSync(w.statePath);
    copyFileSync(`${w.statePath}.restored`, w.statePath);
    w.sandbox.world.setWallet(w.wallets[0]!.address, { pendingLamports: 1n * SOL });
    expect(await d.waitFor((e) => e.event === 'state.replaced')).toMatchObject({ role: 'database', how: 'replaced' });
    await d.waitFor((e) => e.event === 'state.write_failed');
    expect(w.sandbox.ledger()).toEqual([]);
    d.proc.kill('SIGTERM');
    await d.exited;
  });
});
