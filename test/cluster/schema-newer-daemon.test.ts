// Upgrades review (helper 31), as a real process: a daemon claiming on shared state, and the
// shared schema migrated under it by a newer release (its version row, as the newer migration
// leaves it). Before, the daemon checked the version only at start and went on claiming. Now it
// steps aside within a round: it hands its leases back, logs cluster.schema_newer, raises the
// schema_newer alert, and claims nothing more though its rule keeps firing conditions; a daemon of
// this release started now is refused (STATE_TOO_NEW).
import pg from 'pg';
import { expect, it } from 'vitest';
import { PG_SCHEMA_VERSION } from '../../src/store/postgres/migrations.js';
import { CANARY_API_KEY, runCli, spawnCli, writeConfig } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';
import { daemonRig, sleep, SOL, startWorld, until } from './daemon-rig.js';

const rig = daemonRig();

it('a daemon whose shared schema a newer release migrated stops claiming and hands its wallets back', { timeout: 90_000 }, async () => {
  // Pending grows by 1 SOL a second: the rule's condition holds at every poll.
  const { dir, wallets, sandbox: sb } = await startWorld(rig, 'autoclaim-schema-', ['w0', 'w1'], SOL);
  const rules = `  - name: claim\n    when:\n      pending_sol: { gte: 0.5 }\n    do:\n      - claim\n`;
  const config = writeConfig(dir, { baseUrl: sb.url, wallets, rules });
  const url = await createDatabase();
  const env = { AUTOCLAIM_API_KEY: CANARY_API_KEY, AUTOCLAIM_STATE_URL: url };
  const claims = () => sb.ledger().filter((e) => e.op === 'claim').length;

  const a = spawnCli(['run', '--config', config], { cwd: dir, env });
  rig.children.push(a);
  await until('A to claim', () => claims() >= 2);

  // The newer release's migration, as it leaves the version table.
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('INSERT INTO autoclaim_schema (version) VALUES ($1)', [PG_SCHEMA_VERSION + 1]);
  } finally {
    await c.end();
  }
  await until('A to step aside', () => a.events().some((e) => e.event === 'cluster.schema_newer'));
  expect(a.events().find((e) => e.event === 'cluster.schema_newer')).toMatchObject({ level: 'error', found: PG_SCHEMA_VERSION + 1, known: PG_SCHEMA_VERSION });
  // A turn under way when it stepped aside may finish its request; nothing after.
  await sleep(1_500);
  const after = claims();
  await sleep(4_000);
  expect(claims(), 'A claimed after a newer release migrated the shared schema').toBe(after);
  // Every lease it held then is lost for that reason (one lost earlier to a slow machine is not held).
  expect(a.events().filter((e) => e.event === 'lease.lost' && e['why'] === 'schema_newer').length).toBeGreaterThanOrEqual(1);
  await until('the schema_newer alert', () => a.events().some((e) => e.event === 'alert.opened' && e['alert'] === 'schema_newer'));
  expect(a.proc.exitCode).toBeNull();

  // This release started now refuses the newer schema at once.
  const b = await runCli(['once', '--config', config], { cwd: dir, env });
  expect(b.code).not.toBe(0);
  expect(b.stdout + b.stderr).toContain(`schema version ${PG_SCHEMA_VERSION + 1}`);
});
