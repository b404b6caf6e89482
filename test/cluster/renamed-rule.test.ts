// A rule renamed on one host (issue 25, finding 7), as real processes on one PostgreSQL state: A
// claims every wallet under `claim`; the wallets' pending grows back within the same epoch; B
// starts with the same wallets and the rule renamed `claim-v2`. Before, B took its share at the
// next rebalance and claimed those wallets again in the epoch (4 of 4 in the review: a new rule
// name is a new (rule, epoch) key). Now each sees the other's config digest differ, logs
// cluster.config_differs, and the shared wallets are worked by neither: the ledger keeps one
// claim per wallet in the epoch.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { configYaml, spawnCli } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';
import { daemonRig, sleep, SOL, startWorld, until } from './daemon-rig.js';

const rig = daemonRig();

it('a daemon with a renamed rule takes no wallet from the other, and nothing is claimed twice in an epoch', { timeout: 90_000 }, async () => {
  const { dir, wallets, sandbox: sb } = await startWorld(rig, 'autoclaim-renamed-', ['w0', 'w1', 'w2', 'w3']);
  const rule = (name: string) => `  - name: ${name}\n    when:\n      pending_sol: { gte: 0.5 }\n    do:\n      - claim\n`;
  const write = (file: string, name: string): string => {
    const path = join(dir, file);
    writeFileSync(path, configYaml({ baseUrl: sb.url, wallets, rules: rule(name) }).replace('state:\n', 'state:\n  lease: 3s\n'));
    return path;
  };
  const env = { AUTOCLAIM_STATE_URL: await createDatabase() };
  const claims = () => sb.ledger().filter((e) => e.op === 'claim');

  const a = spawnCli(['run', '--config', write('a.yaml', 'claim')], { cwd: dir, env });
  rig.children.push(a);
  await until('A to claim every wallet', () => claims().length === 4);
  // Rewards come back within the same epoch: a rule that fires again would claim again.
  for (const w of wallets) sb.world.setWallet(w.address, { pendingLamports: SOL });

  const b = spawnCli(['run', '--config', write('b.yaml', 'claim-v2')], { cwd: dir, env });
  rig.children.push(b);
  await b.waitFor((e) => e.event === 'daemon.started', 30_000);
  // Several leases: time enough for a rebalance to hand B its share, were it going to.
  await sleep(10_000);

  const byWallet = new Map<string, number>();
  for (const c of claims()) byWallet.set(c.wallet, (byWallet.get(c.wallet) ?? 0) + 1);
  expect([...byWallet.values()], claims().map((c) => `${c.wallet} ${c.epoch}`).join(", ")).toEqual([1, 1, 1, 1]);
  expect(b.events().filter((e) => e.event === 'lease.acquired')).toEqual([]);
  await until('both to see the other’s config', () => [a, b].every((c) => c.events().some((e) => e.event === 'cluster.config_differs')));
  for (const [c, other] of [
    [a, b],
    [b, a],
  ] as const) {
    const said = c.events().filter((e) => e.event === 'cluster.config_differs');
    expect(said[0]).toMatchObject({ level: 'error', contested: 4 });
    expect(String((said[0]?.['others'] as string[] | undefined)?.[0])).toContain(`/${other.proc.pid}/`);
  }
});
