// `--dry-run` on shared PostgreSQL state (session 27, helper h27b found it): a dry daemon joined the
// fleet like any member (a dry flag is no part of the config digest the daemons compare,
// agreement.ts), took its share of the wallets and signed nothing for them, while the cluster looked
// healthy: every wallet owned, no config_differs. 2 of 4 wallets were never claimed while it ran.
// Now `run --dry-run` and `once --dry-run` are refused with shared state before they join, and a
// wallet a live real daemon lists is claimed whatever was tried beside it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { configYaml, spawnCli } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';
import { daemonRig, startWorld, until } from './daemon-rig.js';

const rig = daemonRig();

it('a dry run on shared state is refused before it joins, and the real daemon claims every wallet', { timeout: 90_000 }, async () => {
  const { dir, wallets, sandbox: sb } = await startWorld(rig, 'autoclaim-dry-member-', ['w0', 'w1', 'w2', 'w3']);
  const rules = `  - name: claim\n    when:\n      pending_sol: { gte: 0.5 }\n    do:\n      - claim\n`;
  const config = join(dir, 'autoclaim.yaml');
  writeFileSync(config, configYaml({ baseUrl: sb.url, wallets, rules }).replace('state:\n', 'state:\n  lease: 3s\n'));
  const env = { AUTOCLAIM_STATE_URL: await createDatabase() };
  const claims = () => sb.ledger().filter((e) => e.op === 'claim');

  // An operator tries a rule change dry on a spare host, against the fleet's state.
  for (const command of ['run', 'once']) {
    const dry = spawnCli([command, '--dry-run', '--config', config], { cwd: dir, env });
    rig.children.push(dry);
    expect((await dry.exited).code, `${command} --dry-run`).toBe(2);
    expect(dry.stderr()).toContain('--dry-run is refused with shared state (state.url)');
    expect(dry.events().filter((e) => typeof e.event === 'string' && e.event.startsWith('cluster.'))).toEqual([]);
  }
  expect(sb.stats().total, 'requests the refused dry runs sent').toBe(0);

  const real = spawnCli(['run', '--config', config], { cwd: dir, env });
  rig.children.push(real);
  await until('every wallet claimed', () => new Set(claims().map((c) => c.wallet)).size === wallets.length, 60_000);
  expect(new Set(claims().map((c) => c.wallet))).toEqual(new Set(wallets.map((w) => w.address)));
});
