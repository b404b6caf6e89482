// A wallet switched off on one host only (cluster review, helper 29), as real processes on one
// PostgreSQL state. The config digest daemons compare (agreement.ts) covers the rules, safety and
// lease settings, but a wallet's own settings — `enabled` and the rules bound to it — were not
// compared: A, with the wallet `enabled: false`, holds it and signs nothing for it; B starts with
// it enabled, the rebalance hands it to B (the excess of what A holds goes, by address, to the
// newcomer), and B claims it: the operator's kill switch on A did not hold. Now the wallet's terms
// are published with the wallet list, a wallet two daemons list under different terms is worked by
// neither while both live, and both say so (cluster.config_differs).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { configYaml, spawnCli } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';
import { daemonRig, sleep, startWorld, until } from './daemon-rig.js';

const rig = daemonRig();

it('a wallet switched off on one host is not claimed by another host while both live', { timeout: 90_000 }, async () => {
  const { dir, wallets, sandbox: sb } = await startWorld(rig, 'autoclaim-terms-', ['w0', 'w1', 'w2', 'w3']);
  // The wallet with the highest address: the one a newcomer's share takes from the holder of all four.
  const off = [...wallets].sort((x, y) => (x.address < y.address ? -1 : x.address > y.address ? 1 : 0))[3];
  if (off === undefined) throw new Error('no wallets');
  const rules = `  - name: claim\n    when:\n      pending_sol: { gte: 0.5 }\n    do:\n      - claim\n`;
  const write = (file: string, switchedOff: boolean): string => {
    const path = join(dir, file);
    let yaml = configYaml({ baseUrl: sb.url, wallets, rules }).replace('state:\n', 'state:\n  lease: 3s\n');
    if (switchedOff) {
      const line = `    key: { file: ./keys/${off.name}.json }\n`;
      yaml = yaml.replace(line, `${line}    enabled: false\n`);
    }
    writeFileSync(path, yaml);
    return path;
  };
  const env = { AUTOCLAIM_STATE_URL: await createDatabase() };
  const claims = () => sb.ledger().filter((e) => e.op === 'claim');

  const a = spawnCli(['run', '--config', write('a.yaml', true)], { cwd: dir, env });
  rig.children.push(a);
  await until('A to claim every wallet it may', () => claims().length === 3);

  const b = spawnCli(['run', '--config', write('b.yaml', false)], { cwd: dir, env });
  rig.children.push(b);
  await b.waitFor((e) => e.event === 'daemon.started', 30_000);
  // Several leases: time enough for the rebalance to hand B its share, and B to claim it.
  await sleep(10_000);

  expect(
    claims().filter((c) => c.wallet === off.address),
    'the wallet switched off on A was claimed by B',
  ).toEqual([]);
  expect(claims()).toHaveLength(3);
  await until('both to see the other’s terms', () => [a, b].every((c) => c.events().some((e) => e.event === 'cluster.config_differs')));
  for (const c of [a, b]) expect(c.events().find((e) => e.event === 'cluster.config_differs')).toMatchObject({ level: 'error', contested: 1 });
  // The others are still worked: B took its share of the wallets both list under the same terms.
  expect(b.events().filter((e) => e.event === 'lease.acquired').map((e) => e['address'])).not.toContain(off.address);
});
