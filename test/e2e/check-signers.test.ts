// `check` says which backend signs each wallet and, for one outside the daemon, whether it answered
// and derives the wallet's address — doctor's words — and refuses (exit 78) what a start refuses:
// a remote signer that does not answer or holds another address's key.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/keys/signer.js';
import { TOKEN, transit, type Transit } from '../support/vault-transit.js';
import { configYaml, makeWallets, runCli, tempDir, type TestWallet } from './helpers.js';

describe('check: the signer of each wallet', () => {
  let dir: string;
  let cleanup: () => void;
  let alpha: TestWallet;
  const doubles: Transit[] = [];

  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    [alpha] = makeWallets(dir, ['alpha']) as [TestWallet];
  });
  afterEach(async () => {
    for (const d of doubles.splice(0)) await d.close();
    cleanup();
  });

  /** alpha signs in-process (a key file); treasury (of `address`) through Vault transit at `url`. */
  function config(url: string, address: string): string {
    const treasury: TestWallet = { name: 'treasury', address, keyFile: '', secretKey64: new Uint8Array() };
    const yaml = configYaml({ baseUrl: 'http://127.0.0.1:9/v1', wallets: [alpha, treasury] }).replace(
      'key: { file: ./keys/treasury.json }',
      `key: { vault: { address: "${url}", key: treasury, token_env: VAULT_TOKEN } }`,
    );
    const file = join(dir, 'autoclaim.yaml');
    writeFileSync(file, yaml);
    return file;
  }

  async function vaultOf(): Promise<{ url: string; address: string }> {
    const { secretKey64, address } = generateKeypair();
    const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
    doubles.push(t);
    return { url: t.url, address };
  }

  it('names the backend of each wallet, and that the remote one answered with the right key', async () => {
    const v = await vaultOf();
    const r = await runCli(['check', '--config', config(v.url, v.address)], { cwd: dir, env: { VAULT_TOKEN: TOKEN } });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`\nsigners\n  wallet alpha: its key derives ${alpha.address} (signed in-process, key from file)\n`);
    expect(r.stdout).toContain(`  wallet treasury: signed by vault, which answered and whose key derives ${v.address}\n`);
    expect(r.stdout).toMatch(/valid \(2 wallet\(s\), 1 rule\(s\), all keys load and match\)/);
    expect(r.stdout).not.toContain(TOKEN);
  });

  it('exits 78 when the remote signer holds the key of another address, saying which wallet', async () => {
    const v = await vaultOf();
    const other = generateKeypair().address;
    const r = await runCli(['check', '--config', config(v.url, other)], { cwd: dir, env: { VAULT_TOKEN: TOKEN } });
    expect(r.code).toBe(78);
    expect(r.stdout).toContain(`  wallet treasury: signed by vault, which did not answer or does not derive ${other}\n`);
    expect(r.stderr).toMatch(/wallets\[1\]\.key: wallet \w+: the vault signer: .*is the key of address/);
    expect(r.stderr).not.toContain(TOKEN);
  });

  it('exits 78 when the remote signer does not answer', async () => {
    const { address } = generateKeypair();
    const r = await runCli(['check', '--config', config('http://127.0.0.1:9', address)], { cwd: dir, env: { VAULT_TOKEN: TOKEN } });
    expect(r.code).toBe(78);
    expect(r.stdout).toContain(`  wallet treasury: signed by vault, which did not answer or does not derive ${address}\n`);
    expect(r.stderr).toMatch(/wallets\[1\]\.key: wallet \w+: the vault signer: /);
  });
});
