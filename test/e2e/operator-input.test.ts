// Operator input as real processes (helper 40; docs/reliability.md "Operator input, a hostile
// review"): an empty --config is a usage error, not the default config; a reload whose file a
// YAML 1.1 reader would read otherwise is refused and said, the running config kept.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { buildOnce } from './build.js';
import { configYaml, makeWallets, spawnCli, tempDir, writeConfig, type Child } from './helpers.js';

beforeAll(() => buildOnce(), 120_000);

describe('operator input, as real processes', () => {
  let dir: string;
  let cleanup: () => void;
  const children: Child[] = [];

  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
  });
  afterEach(async () => {
    for (const c of children.splice(0)) await c.stop();
    cleanup();
  });

  const start = (argv: string[], env?: NodeJS.ProcessEnv) => {
    const c = spawnCli(argv, { cwd: dir, env });
    children.push(c);
    return c;
  };

  it('an empty --config, or two, is a usage error (exit 2), not the default ./config/autoclaim.yaml or the last one', async () => {
    // `--config "$CONFIG"` with CONFIG unset: before, the default file was checked (and `run` ran it).
    const configDir = join(dir, 'config');
    mkdirSync(configDir);
    const wallets = makeWallets(configDir, ['alpha']);
    writeFileSync(join(configDir, 'autoclaim.yaml'), configYaml({ baseUrl: 'http://127.0.0.1:9/v1', wallets }));
    const c = start(['check', '--config', '']);
    const exit = await c.exited;
    expect(c.stderr()).toContain('--config names no file');
    expect(c.stdout()).not.toContain(wallets[0]!.address);
    expect(exit.code).toBe(2);
    // Two of them: before, the last was taken.
    const twice = start(['check', '--config', join(configDir, 'autoclaim.yaml'), '--config', join(configDir, 'autoclaim.yaml')]);
    expect((await twice.exited).code).toBe(2);
    expect(twice.stderr()).toContain('given more than once');
  });

  it('a log level in the environment that is none is a config error (exit 78), not a stack trace', async () => {
    const wallets = makeWallets(dir, ['alpha']);
    const config = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets });
    const c = start(['check', '--config', config], { AUTOCLAIM_LOG_LEVEL: 'verbose' });
    const exit = await c.exited;
    expect(c.stderr()).toContain('$AUTOCLAIM_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent');
    expect(c.stderr()).not.toMatch(/\n.*\bat /);
    expect(exit.code).toBe(78);
  });

  it('send refuses an --amount (or --wallet, --symbol, --id) given twice, exit 2, before reading anything', async () => {
    // Commander took the last one: `--amount 100 … --amount 1000` sent 1000.
    const c = start(['send', 'deposit', '--wallet', 'alpha', '--symbol', 'SOL2X', '--amount', '100', '--id', 'x1', '--amount', '1000', '--yes', '--config', 'nope.yaml']);
    const exit = await c.exited;
    expect(c.stderr()).toContain("option '--amount <n>' argument '1000' is invalid. given more than once; give it once");
    expect(exit.code).toBe(2);
    const w = start(['send', 'claim', '--wallet', 'alpha', '--wallet', 'beta', '--id', 'x2', '--yes', '--config', 'nope.yaml']);
    expect((await w.exited).code).toBe(2);
    expect(w.stderr()).toContain("option '--wallet <name>' argument 'beta' is invalid");
  });

  describe('a reload', () => {
    let sandbox: Sandbox;
    beforeEach(async () => {
      sandbox = await startSandbox({ apiKey: 'canary-apikey-7Qk2ZxW9pLmN4vR8sT1u', defaultAccrualLamportsPerSec: 0n, wallets: [] });
    });
    afterEach(async () => {
      for (const c of children.splice(0)) await c.stop();
      await sandbox.close();
    });

    it('with a cap written 010 is refused at its line and key; the running config keeps polling', async () => {
      const wallets = makeWallets(dir, ['alpha']);
      const config = writeConfig(dir, { baseUrl: sandbox.url, wallets });
      const d = start(['run', '--config', config]);
      await d.waitFor((e) => e.event === 'poll.ok');

      // 8 to a YAML 1.1 reader, 10 to the parser: before, the reload took 10.
      writeFileSync(config, configYaml({ baseUrl: sandbox.url, wallets, maxSolPerAction: '010' }));
      d.proc.kill('SIGHUP');
      const invalid = await d.waitFor((e) => e.event === 'config.invalid' || e.event === 'config.reloaded');
      expect(invalid.event).toBe('config.invalid');
      expect(JSON.stringify(invalid.issues)).toMatch(/autoclaim\.yaml:\d+:3 safety\.max_sol_per_action: 010 has a leading zero/);
      const before = d.events().length;
      await d.waitFor((e, i) => e.event === 'poll.ok' && i >= before);
    });
  });
});
