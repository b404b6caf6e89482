// A PostgreSQL whose server default is synchronous_commit = off (issue 25, finding 2), as real
// `autoclaim run` processes: postgresql.conf (here `-c`) says a commit may answer before its WAL is
// written, and the WAL writer flushes only every 10 s, so a crash loses the last commits — a
// recorded `sending` among them, once its request is out. autoclaim's sessions set
// synchronous_commit = on themselves (a startup parameter, which outranks the server's default).
// Crashed (`pg_ctl stop -m immediate`: SIGQUIT) a few tens of ms after claims were applied, and
// started again, several times: no claim applied that no recorded attempt explains, no (wallet,
// plan epoch) claimed twice, and no step left `sending`.
//
// Seeded (DURABLE_SEED replays; the seed is in every failure message): how long after a claim each
// crash comes (20–60 ms) and how long the database stays down.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, configYaml, makeWallets, runCli, spawnCli, tempDir, type Child, type TestWallet } from '../e2e/helpers.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { prng, seedFrom } from '../support/prng.js';
import { operator, recordedSteps, sendingSteps, until } from './journal.js';
import { checkLedger } from './ledger-check.js';

const SEED = seedFrom('DURABLE_SEED');
const CRASHES = 4;
const SOL = 1_000_000_000n;
const RULE = `  - name: harvest
    when:
      pending_sol: { gte: 0.5 }
    do:
      - claim
`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let sandbox: Sandbox;
let pgc: PostgresCluster;
let dir: string;
let cleanup: () => void;
let wallets: TestWallet[];
const children: Child[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = tempDir('autoclaim-async-commit-'));
  wallets = makeWallets(dir, ['w0', 'w1', 'w2', 'w3']);
  sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    epochMs: 3_000,
    tsWindowSec: 10,
    defaultAccrualLamportsPerSec: 0n,
    wallets: wallets.map((w) => ({ address: w.address, pendingLamports: 0n, accrualLamportsPerSec: SOL, balanceLamports: 0n })),
  });
  // The server's default, as an operator's postgresql.conf or a managed service may have it.
  pgc = await startPostgres({ settings: { synchronous_commit: 'off', wal_writer_delay: '10000ms' } });
  // A server and a sandbox of its own start slowly on a busy 2-core machine.
}, 120_000);

afterEach(async () => {
  for (const c of children.splice(0)) await c.stop();
  await Promise.all(children.map((c) => c.exited));
  await sandbox?.close();
  await pgc?.stop();
  cleanup?.();
}, 60_000);

it('commits durably though the server defaults to synchronous_commit=off: crashed after claims, nothing applied unrecorded or twice', { timeout: 240_000 }, async () => {
  const rnd = prng(SEED);
  const seed = `DURABLE_SEED=${SEED}`;
  const stateUrl = await pgc.createDatabase();
  // Anyone else's session gets the server's default: the setting is really off.
  const probe = new pg.Client({ connectionString: stateUrl });
  await probe.connect();
  expect((await probe.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]?.synchronous_commit).toBe('off');
  await probe.end();

  const daemon = async (name: string): Promise<Child> => {
    const yaml = configYaml({ baseUrl: sandbox.url, wallets, rules: RULE, maxSolPerAction: '1000', apiExtra: '  ts_window: 10s\n' }).replace(
      'state:\n  path: ./state/autoclaim.db\n',
      'state:\n  path: ./state/autoclaim.db\n  lease: 3s\n  query_timeout: 2s\n',
    );
    const config = join(dir, `${name}.yaml`);
    writeFileSync(config, yaml);
    const child = spawnCli(['run', '--config', config], { cwd: dir, env: { AUTOCLAIM_STATE_URL: stateUrl, AUTOCLAIM_SANDBOX_EPOCHS: 'fast' } });
    children.push(child);
    await child.waitFor((e) => e.event === 'daemon.started', 30_000);
    return child;
  };
  const a = await daemon('a');
  const b = await daemon('b');
  const claims = () => sandbox.ledger().filter((e) => e.op === 'claim').length;

  // Claims in doubt across a 3 s epoch's rollover are held for an operator by design: one resolves them.
  const stopOperator = await operator(stateUrl, () => sandbox.ledger(), 10);
  const log = (c: Child) => c.events().filter((e) => e.event !== 'poll.ok').map((e) => JSON.stringify(e)).join('\n').slice(-4000);

  for (let i = 0; i < CRASHES; i++) {
    const seen = claims();
    // Watch the ledger closely: the crash lands 20–60 ms after a claim was applied, when the
    // daemon that sent it is recording its answer (and others may be committing their `sending`).
    const end = Date.now() + 45_000;
    while (claims() === seen) {
      if (Date.now() > end) throw new Error(`${seed}: no claim before crash ${i}\nA:\n${log(a)}\nB:\n${log(b)}`);
      await sleep(2);
    }
    await sleep(20 + Math.floor(rnd() * 40));
    await pgc.crash();
    await sleep(300 + Math.floor(rnd() * 1_200));
    await pgc.restart();
    for (const c of [a, b]) expect(c.proc.exitCode, `${seed}: a daemon died`).toBeNull();
  }
  // Working again after the last restart, and every step settled out of `sending`.
  const after = claims();
  await until('claims after the last restart', () => claims(), (n) => n >= after + 2, 60_000, `${seed}\nA:\n${log(a)}\nB:\n${log(b)}`);
  await until('no step left sending', () => sendingSteps(stateUrl), (ids) => ids.length === 0, 60_000, `${seed}\nA:\n${log(a)}\nB:\n${log(b)}`);

  await stopOperator();
  for (const c of [a, b]) c.proc.kill('SIGTERM');
  expect((await Promise.all([a.exited, b.exited])).map((x) => x.code), seed).toEqual([0, 0]);
  const verdict = checkLedger({
    ledger: sandbox.ledger(),
    steps: await recordedSteps(stateUrl),
    geometry: { origin: sandbox.world.epochOrigin, epochMs: sandbox.world.epochMs },
    qualifying: [],
    addresses: wallets.map((w) => w.address),
    ops: ['claim'],
  });
  expect({ unexplained: verdict.unexplained.map((e) => `${e.wallet} ${e.op} ${e.epoch}`), doubles: verdict.doubles }, seed).toEqual({ unexplained: [], doubles: [] });
});

it('refuses a database in recovery (a read-only standby) at start, and doctor reports it', { timeout: 120_000 }, async () => {
  const stateUrl = await pgc.createDatabase();
  const config = join(dir, 'standby.yaml');
  writeFileSync(config, configYaml({ baseUrl: sandbox.url, wallets, rules: RULE, maxSolPerAction: '1000' }));
  const env = { AUTOCLAIM_STATE_URL: stateUrl, AUTOCLAIM_SANDBOX_EPOCHS: 'fast' };
  // The primary: migrated and worked once.
  expect((await runCli(['once', '--config', config], { cwd: dir, env })).code).toBe(0);
  // The same data started as a standby (standby.signal, no primary to follow): in recovery, read-only.
  await pgc.crash();
  writeFileSync(join(pgc.dataDir, 'standby.signal'), '');
  await pgc.restart();
  const ledger = sandbox.ledger().length;

  const once = await runCli(['once', '--config', config], { cwd: dir, env });
  expect(once.code).toBe(1);
  expect(`${once.stdout}${once.stderr}`).toMatch(/in recovery: it is a read-only standby \(point state\.url at the primary\)/);
  const run = await runCli(['run', '--config', config], { cwd: dir, env });
  expect(run.code).toBe(1);
  expect(`${run.stdout}${run.stderr}`).toMatch(/in recovery/);
  const doctor = await runCli(['doctor', '--config', config], { cwd: dir, env });
  expect(doctor.code).toBe(1);
  expect(doctor.stdout).toMatch(/in recovery/);
  expect(sandbox.ledger()).toHaveLength(ledger);
});
