// A reload re-reads keys (issue 11, item 10): SIGHUP used to keep signing with the key read at
// start when a wallet was pointed at another key file, or when its key file became readable by
// others, and logged `config reloaded`. Now every wallet's key is loaded again from the source the
// new config names and checked against its address; one failure refuses the whole reload, keeping
// the running config and keys. Driven in-process: a real runtime, the in-process sandbox (which
// verifies every signature against the wallet's address), captured JSON log lines.
import { chmodSync, copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import type { Redactor } from '../../src/log/redact.js';
import type { Runtime } from '../../src/runtime.js';
import type { WalletSigner } from '../../src/executor/ports.js';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { sandboxYaml, startInProcess, type ConfigWallet, type InProcess } from './in-process.js';

const entry = (w: TestWallet, keyFile = `./keys/${w.name}.json`): ConfigWallet => ({ name: w.name, address: w.address, keyFile });
const yaml = (wallets: ConfigWallet[], threshold?: string): string => sandboxYaml(wallets, threshold === undefined ? {} : { threshold });

describe('reload re-reads every key', () => {
  let dir: string;
  let cleanup: () => void;
  let configPath: string;
  let wallets: TestWallet[];
  let alpha: TestWallet;
  let app: InProcess;
  let redactor: Redactor;
  let runtime: Runtime;
  let daemon: Daemon;

  const named = (event: string) => app.log.events(event);
  const writeYaml = (text: string) => writeFileSync(configPath, text);
  const signer = (address: string): WalletSigner | undefined => runtime.signers.get(address);

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-reload-'));
    // gamma's key exists from the start, but only a reload adds the wallet; delta's key is another address.
    wallets = makeWallets(dir, ['alpha', 'beta', 'gamma', 'delta']);
    alpha = wallets[0]!;
    configPath = join(dir, 'autoclaim.yaml');
    writeYaml(yaml([entry(alpha), entry(wallets[1]!)]));
    app = await startInProcess({ dir, configPath });
    ({ runtime, daemon, redactor } = app);
  });

  afterEach(async () => {
    await app.stop();
    cleanup();
  });

  it('keys the signers by wallet address, each deriving it', () => {
    expect([...runtime.signers.keys()].sort()).toEqual([alpha.address, wallets[1]!.address].sort());
    for (const [address, s] of runtime.signers) expect(s.address).toBe(address);
  });

  it('(a) takes a wallet pointed at another key file of the same address', () => {
    const before = signer(alpha.address);
    copyFileSync(alpha.keyFile, join(dir, 'keys', 'alpha-rotated.json'));
    chmodSync(join(dir, 'keys', 'alpha-rotated.json'), 0o600);
    writeYaml(yaml([entry(alpha, './keys/alpha-rotated.json'), entry(wallets[1]!)]));

    expect(daemon.reload()).toBe(true);
    expect(named('config.reloaded')).toHaveLength(1);
    expect(named('config.invalid')).toEqual([]);
    const after = signer(alpha.address);
    expect(after).not.toBe(before);
    expect(after?.address).toBe(alpha.address);
    expect((after as { source?: string } | undefined)?.source).toBe(`key file ${join(dir, 'keys', 'alpha-rotated.json')}`);
    expect(daemon.currentConfig.wallets[0]?.key).toEqual({ file: join(dir, 'keys', 'alpha-rotated.json') });
  });

  it('(b) refuses a wallet pointed at the key of another address, keeping the running config and key', async () => {
    const before = signer(alpha.address);
    const beforeConfig = daemon.currentConfig;
    // The same edit also lowers the threshold: none of it may take effect.
    writeYaml(yaml([entry(alpha, './keys/delta.json'), entry(wallets[1]!)], '0.001'));

    expect(daemon.reload()).toBe(false);
    const [invalid, ...more] = named('config.invalid');
    expect(more).toEqual([]);
    expect(invalid?.['level']).toBe('error');
    // Placed at the wallet's key: (issue 13), like every config problem.
    expect(invalid?.['issues']).toEqual([
      `${configPath}:10:5 wallets[0].key: wallet alpha: key file ${wallets[3]!.keyFile} is the key of address ${wallets[3]!.address}, but wallet alpha is configured with address ${alpha.address}`,
    ]);
    expect(named('config.reloaded')).toEqual([]);
    expect(daemon.currentConfig).toBe(beforeConfig);
    expect(signer(alpha.address)).toBe(before);
    expect([...runtime.signers.keys()].sort()).toEqual([alpha.address, wallets[1]!.address].sort());
    // No key under an address it does not derive.
    expect([...runtime.signers.values()].map((s) => s.address)).not.toContain(wallets[3]!.address);

    // The old key still signs for alpha: the sandbox checks the signature against alpha's address.
    await daemon.once();
    const claims = runtime.sandbox?.ledger().filter((e) => e.op === 'claim' && e.wallet === alpha.address) ?? [];
    expect(claims).toHaveLength(1);
  });

  it('(c) refuses a key file that became readable by others, naming it and the fix, keeping the old signer', async () => {
    const before = signer(alpha.address);
    chmodSync(alpha.keyFile, 0o644);

    expect(daemon.reload()).toBe(false);
    const [invalid] = named('config.invalid');
    expect(invalid?.['level']).toBe('error');
    expect(invalid?.['issues']).toEqual([
      `${configPath}:10:5 wallets[0].key: wallet alpha: key file ${alpha.keyFile} is readable by group or others (mode 0644); restrict it with: chmod 600 ${alpha.keyFile}`,
    ]);
    expect(named('config.reloaded')).toEqual([]);
    expect(signer(alpha.address)).toBe(before);

    await daemon.once();
    expect(runtime.sandbox?.ledger().filter((e) => e.op === 'claim' && e.wallet === alpha.address)).toHaveLength(1);

    // Fixed, the same config reloads.
    chmodSync(alpha.keyFile, 0o600);
    expect(daemon.reload()).toBe(true);
  });

  it('refuses the whole reload when one of several keys fails, listing every failure', () => {
    const before = new Map(runtime.signers);
    chmodSync(alpha.keyFile, 0o640);
    writeYaml(yaml([entry(alpha), entry(wallets[1]!, './keys/missing.json'), entry(wallets[2]!)]));

    expect(daemon.reload()).toBe(false);
    const issues = named('config.invalid')[0]?.['issues'] as string[];
    expect(issues).toHaveLength(2);
    expect(issues[0]).toMatch(/ wallets\[0\]\.key: wallet alpha: .*mode 0640/);
    expect(issues[1]).toBe(`${configPath}:13:5 wallets[1].key: wallet beta: key file ${join(dir, 'keys', 'missing.json')} does not exist`);
    // Kept whole: gamma's good key was not added, and nothing was replaced.
    expect(new Map(runtime.signers)).toEqual(before);
    for (const [address, s] of before) expect(runtime.signers.get(address)).toBe(s);
  });

  it('(d) loads the key of a wallet the reload adds, and registers it with the redactor', () => {
    const gamma = wallets[2]!;
    writeYaml(yaml([entry(alpha), entry(wallets[1]!), entry(gamma)]));

    expect(daemon.reload()).toBe(true);
    expect(signer(gamma.address)?.address).toBe(gamma.address);
    expect(daemon.currentConfig.wallets.map((w) => w.name)).toEqual(['alpha', 'beta', 'gamma']);
    const printed = bs58.encode(gamma.secretKey64);
    expect(redactor.redact(`key ${printed}`)).not.toContain(printed);
  });

  it('drops the key of a wallet the reload removes', () => {
    writeYaml(yaml([entry(alpha)]));
    expect(daemon.reload()).toBe(true);
    expect([...runtime.signers.keys()]).toEqual([alpha.address]);
  });

  it('a config that does not load is refused before any key is read', () => {
    const before = signer(alpha.address);
    writeYaml(`${yaml([entry(alpha), entry(wallets[1]!)])}bogus: 1\n`);
    expect(daemon.reload()).toBe(false);
    expect(named('config.invalid')[0]?.['issues']).toEqual([expect.stringMatching(/autoclaim\.yaml:\d+:\d+ bogus: unknown key "bogus"/)]);
    expect(signer(alpha.address)).toBe(before);
  });
});
