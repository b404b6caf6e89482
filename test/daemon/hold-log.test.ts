// A rule held back by a cooldown is said at info once, not on every poll it holds (months of
// running review: under a 6 h cooldown, 10,000 wallets polled every 4 minutes wrote 3.6 million
// `rule.skipped` lines a day at info). Driven in-process: a real runtime and daemon, the in-process
// sandbox, captured log lines.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeWallets, tempDir } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

let app: InProcess | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await app?.stop();
  cleanup?.();
  app = undefined;
});

it('a cooldown hold: one info line, then debug on every later poll it holds', async () => {
  const t = tempDir('autoclaim-hold-log-');
  cleanup = t.cleanup;
  const wallets = makeWallets(t.dir, ['alpha']);
  const configPath = join(t.dir, 'autoclaim.yaml');
  const yaml = sandboxYaml(wallets, { threshold: '0.000000001' }).replace('    do:\n      - claim\n', '    do:\n      - claim\n    limits:\n      once_per_epoch: false\n      cooldown: 6h\n');
  expect(yaml).toContain('cooldown: 6h');
  writeFileSync(configPath, yaml);
  app = await startInProcess({ dir: t.dir, configPath });
  for (let poll = 0; poll < 5; poll++) await app.daemon.once();

  expect(app.runtime.sandbox!.ledger().map((e) => e.op)).toEqual(['claim']);
  const holds = app.log.events('rule.skipped').filter((e) => e['reason'] === 'cooldown');
  expect(holds.map((e) => e['level'])).toEqual(['info', 'debug', 'debug', 'debug']);
});
