// A decision clock off the database's (cluster review, helper 29), as real processes on one
// PostgreSQL state. Cooldowns and day windows are judged by a daemon's decision clock
// (executor/decision-clock.ts: the wall clock read once at start, plus monotonic time since), and
// the plans it records are dated by it; the cluster's clock bound compared only the wall clock
// with the database's. B starts with its wall clock 90 min ahead (a host whose NTP had not synced
// yet at boot), so its decision clock starts there; NTP sets the wall clock right, B's clock bound
// is satisfied and it signs — judging A's plan of a moment ago 90 min old. With a 1 h cooldown it
// claimed again as soon as it held the wallet: two claims in the cooldown. Now the decision clock
// is measured against the database's at each lease round too, and follows the wall clock again
// once that one is within bounds and it is not (`clock.decision_reset`): one claim.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, configYaml, makeWallets, spawnCli, tempDir, type Child } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';
import { until } from './journal.js';

const SOL = 1_000_000_000n;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const children: Child[] = [];
let sandbox: Sandbox | undefined;
let cleanup = () => {};
afterEach(async () => {
  for (const c of children.splice(0)) await c.stop();
  await sandbox?.close();
  cleanup();
});

it('a daemon whose decision clock started off the database’s judges the cooldown by the database’s time once its wall clock is right', { timeout: 120_000 }, async () => {
  const t = tempDir('autoclaim-decision-clock-');
  cleanup = t.cleanup;
  const wallets = makeWallets(t.dir, ['w0']);
  const w0 = wallets[0];
  if (w0 === undefined) throw new Error('no wallet');
  sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [{ address: w0.address, pendingLamports: SOL, accrualLamportsPerSec: 0n, balanceLamports: 0n }],
  });
  const sb = sandbox;
  const claims = () => sb.ledger().filter((e) => e.op === 'claim');
  // Claims again in the same epoch, but never within an hour of the last claim.
  const rule = `  - name: claim\n    when:\n      pending_sol: { gte: 0.5 }\n    do:\n      - claim\n    limits: { once_per_epoch: false, cooldown: 1h }\n`;
  const write = (name: string): string => {
    const path = join(t.dir, `${name}.yaml`);
    writeFileSync(path, configYaml({ baseUrl: sb.url, wallets, rules: rule }).replace('state:\n', 'state:\n  lease: 3s\n'));
    return path;
  };
  mkdirSync(join(t.dir, 'state'), { recursive: true });
  const env = { AUTOCLAIM_STATE_URL: await createDatabase() };

  const a = spawnCli(['run', '--config', write('a')], { cwd: t.dir, env });
  children.push(a);
  await until('A to claim', () => claims().length, (n) => n === 1, 30_000, 'A');

  // B boots with its wall clock 90 min ahead; NTP sets it right a moment later.
  const clockFile = join(t.dir, 'b-clock');
  writeFileSync(clockFile, String(90 * 60_000));
  const shift = join(import.meta.dirname, 'shift-clock.mjs');
  const b = spawnCli(['run', '--config', write('b')], { cwd: t.dir, env: { ...env, AUTOCLAIM_TEST_CLOCK_FILE: clockFile, NODE_OPTIONS: `--import=${shift}` } });
  children.push(b);
  await b.waitFor((e) => e.event === 'clock.skew' && e.against === 'database', 30_000);
  writeFileSync(clockFile, '0');
  // At its next lease round (a second each) B measures its wall clock right again, and its decision
  // clock follows: waited for, where a fixed 3 s was a guess at that round.
  await b.waitFor((e) => e.event === 'clock.decision_reset', 30_000);

  // A stops; B takes the wallet, whose rewards are back.
  await a.stop('SIGTERM');
  await b.waitFor((e) => e.event === 'lease.acquired' && e.address === w0.address, 30_000);
  sb.world.setWallet(w0.address, { pendingLamports: SOL });
  // Several polls (one a second): time to decide and claim, were B going to.
  await sleep(6_000);

  const bLog = b.events().filter((e) => e.event !== 'poll.ok').map((e) => JSON.stringify(e)).join('\n').slice(-6000);
  expect(claims(), `claimed again within the cooldown\nB:\n${bLog}`).toHaveLength(1);
  // B's decision clock followed its wall clock once that was right again, and said so.
  expect(b.events().filter((e) => e.event === 'clock.decision_reset')).toMatchObject([{ level: 'warn', against: 'database' }]);
});
