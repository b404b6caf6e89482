// Issue #28, "how it is shown": the daemon (`autoclaim once`, a real process) signs through each
// backend that keeps the key out of it — the signer service (a real `autoclaim signer` process on
// its socket), Vault transit (the local double of test/support/vault-transit.ts), AWS KMS (the
// double of test/support/kms-double.ts) and PKCS#11 (a SoftHSM2 token the test creates) — and
// claims, then deposits, through the sandbox, which verifies every signature. The ledger shows exactly one claim and one deposit; a second `once` in the same
// epoch adds nothing. The daemon holds no key file for the wallet.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/keys/signer.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { SqliteJournal } from '../../src/signer/journal.js';
import { signerSetup, signerYaml } from '../signer/support.js';
import { KMS_KEY_ID, KMS_TEST_ENV, kmsDouble } from '../support/kms-double.js';
import { makeToken, MODULE, SKIP_REASON, softhsmConf } from '../support/softhsm.js';
import { TOKEN, transit } from '../support/vault-transit.js';
import { buildOnce } from './build.js';
import { CANARY_API_KEY, configYaml, spawnCli, tempDir, type Child, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

describe('once signs through a backend that keeps the key out of the daemon', () => {
  const undo: Array<() => Promise<void> | void> = [];
  const children: Child[] = [];

  beforeAll(() => buildOnce(), 120_000);

  afterEach(async () => {
    for (const c of children.splice(0)) await c.stop('SIGTERM');
    for (const u of undo.splice(0).reverse()) await u();
  });

  /** The ops in a signer journal, oldest first. */
  function journalOps(path: string): string[] {
    const journal = SqliteJournal.open(path);
    try {
      return journal.all().map((r) => r.op as string);
    } finally {
      journal.close();
    }
  }

  /** A Vault transit double holding a new wallet's key (closed after the test). */
  async function vaultWallet(): Promise<{ t: Awaited<ReturnType<typeof transit>>; address: string }> {
    const { secretKey64, address } = generateKeypair();
    const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
    undo.push(() => t.close());
    return { t, address };
  }

  /** A sandbox with one wallet of 1 SOL pending, and the daemon's config whose wallet is signed by `key`. */
  async function daemonFor(dir: string, address: string, key: string): Promise<{ sandbox: Sandbox; config: string }> {
    const sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address, pendingLamports: 1n * SOL, accrualLamportsPerSec: 0n, balanceLamports: 0n }],
    });
    undo.push(() => sandbox.close());
    const wallet: TestWallet = { name: 'treasury', address, keyFile: '', secretKey64: new Uint8Array() };
    const yaml = configYaml({ baseUrl: sandbox.url, wallets: [wallet] }).replace('key: { file: ./keys/treasury.json }', `key: ${key}`);
    expect(yaml).toContain(`key: ${key}`);
    const config = join(dir, 'autoclaim.yaml');
    writeFileSync(config, yaml);
    return { sandbox, config };
  }

  async function once(dir: string, config: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; events: Array<Record<string, unknown>>; stderr: string }> {
    const child = spawnCli(['once', '--config', config], { cwd: dir, env });
    children.push(child);
    const { code } = await child.exited;
    return { code, events: child.events(), stderr: child.stderr() };
  }

  /** Claim then deposit, each once, each signature verified by the sandbox; nothing more on a second run. */
  async function claimsAndDepositsOnce(dir: string, address: string, key: string, env: NodeJS.ProcessEnv): Promise<void> {
    const { sandbox, config } = await daemonFor(dir, address, key);
    const first = await once(dir, config, env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(sandbox.ledger().map((e) => [e.wallet, e.op, e.symbol, e.amountLamports])).toEqual([
      [address, 'claim', null, 1n * SOL],
      [address, 'deposit', 'SOL2X', SOL / 2n],
    ]);
    expect(first.events.filter((e) => e.event === 'action.acknowledged')).toHaveLength(2);
    // No signature was refused by the sandbox, and no step was refused by the daemon's own check.
    expect(first.events.filter((e) => e.event === 'action.refused' || e.event === 'action.failed')).toEqual([]);
    const second = await once(dir, config, env);
    expect(second.code).toBe(0);
    expect(sandbox.ledger()).toHaveLength(2);
  }

  it('signer: a real `autoclaim signer` process on its socket, its journal recording both signatures', async () => {
    const setup = signerSetup();
    undo.push(() => setup.cleanup());
    const signer = spawnCli(['signer', '--config', setup.configFile], { cwd: setup.dir });
    children.push(signer);
    await signer.waitFor((e) => e.event === 'signer.started');
    const w = setup.wallets[0]!;
    // The daemon's side has no key file: only the signer's directory holds it.
    const { dir, cleanup } = tempDir();
    undo.push(cleanup);
    await claimsAndDepositsOnce(dir, w.address, `{ signer: { socket: ${setup.socket}, key: treasury } }`, {});
    expect(journalOps(setup.journal)).toEqual(['claim', 'deposit']);
  }, 60_000);

  /** A real `autoclaim signer` process whose signer.yaml holds the wallet's key as `key` (a remote backend); the daemon asks it. */
  async function signerHolding(address: string, key: string, env: NodeJS.ProcessEnv): Promise<{ socket: string; journal: string }> {
    const { dir, cleanup } = tempDir('autoclaim-signer-');
    undo.push(cleanup);
    const socket = join(dir, 'signer.sock');
    const configFile = join(dir, 'signer.yaml');
    writeFileSync(configFile, signerYaml({ socket, wallets: [{ name: 'treasury', address, keyFile: '', secretKey64: new Uint8Array() }], key: () => key }));
    const signer = spawnCli(['signer', '--config', configFile], { cwd: dir, env });
    children.push(signer);
    await signer.waitFor((e) => e.event === 'signer.started');
    return { socket, journal: join(dir, 'journal.db') };
  }

  it('signer holding a Vault key: the service signs through transit, journals, and the sandbox verifies', async () => {
    const { t, address } = await vaultWallet();
    const s = await signerHolding(address, `{ vault: { address: "${t.url}", key: treasury, token_env: VAULT_TOKEN } }`, { VAULT_TOKEN: TOKEN });
    const { dir, cleanup } = tempDir();
    undo.push(cleanup);
    // The daemon has neither the key nor the Vault token: only the signer's process does.
    await claimsAndDepositsOnce(dir, address, `{ signer: { socket: ${s.socket}, key: treasury } }`, {});
    expect(t.seen.filter((r) => r.method === 'POST' && r.url === '/v1/transit/sign/treasury')).toHaveLength(2);
    expect(journalOps(s.journal)).toEqual(['claim', 'deposit']);
  }, 60_000);

  it('signer holding a Vault key that goes down: the step waits, nothing journalled; once Vault is back the same epoch is claimed', async () => {
    const { t, address } = await vaultWallet();
    const s = await signerHolding(address, `{ vault: { address: "${t.url}", key: treasury, token_env: VAULT_TOKEN } }`, { VAULT_TOKEN: TOKEN });
    const { dir, cleanup } = tempDir();
    undo.push(cleanup);
    const { sandbox, config } = await daemonFor(dir, address, `{ signer: { socket: ${s.socket}, key: treasury } }`);
    t.fail(503);
    const down = await once(dir, config, {});
    expect(sandbox.ledger()).toEqual([]);
    // Not refused: the service said SIGNER_UNAVAILABLE, so the step went back to planned.
    expect(down.events.filter((e) => e.event === 'action.refused')).toEqual([]);
    expect(journalOps(s.journal)).toEqual([]);
    t.fail(undefined);
    const back = await once(dir, config, {});
    expect(back.stderr).toBe('');
    expect(sandbox.ledger().map((e) => [e.op, e.amountLamports])).toEqual([
      ['claim', 1n * SOL],
      ['deposit', SOL / 2n],
    ]);
    expect(journalOps(s.journal)).toEqual(['claim', 'deposit']);
  }, 60_000);

  it.skipIf(MODULE === undefined)('signer holding a PKCS#11 key: the service signs on a SoftHSM2 token, journals, and the sandbox verifies', async () => {
    const { dir, cleanup } = tempDir();
    undo.push(cleanup);
    const conf = softhsmConf(join(dir, 'hsm'));
    const address = makeToken(conf, 'autoclaim-svc', '5678');
    const key = `{ pkcs11: { module: ${MODULE}, token: autoclaim-svc, label: wk, pin_env: HSM_PIN, sessions: 2 } }`;
    const s = await signerHolding(address, key, { SOFTHSM2_CONF: conf, HSM_PIN: '5678' });
    await claimsAndDepositsOnce(dir, address, `{ signer: { socket: ${s.socket}, key: treasury } }`, {});
    expect(journalOps(s.journal)).toEqual(['claim', 'deposit']);
  }, 60_000);

  it('vault: transit signatures over the rendered message, the token sent only as X-Vault-Token', async () => {
    const { t, address } = await vaultWallet();
    const { dir, cleanup } = tempDir();
    undo.push(cleanup);
    await claimsAndDepositsOnce(dir, address, `{ vault: { address: "${t.url}", key: treasury, token_env: VAULT_TOKEN } }`, { VAULT_TOKEN: TOKEN });
    const signs = t.seen.filter((s) => s.method === 'POST' && s.url === '/v1/transit/sign/treasury');
    expect(signs).toHaveLength(2);
    expect(t.seen.every((s) => s.token === TOKEN)).toBe(true);
    // The token is a secret: it never reaches the state file.
    const state = readFileSync(join(dir, 'state/autoclaim.db'));
    expect(state.includes(TOKEN)).toBe(false);
  }, 60_000);

  it('aws_kms: Sign RAW with ED25519_SHA_512 at the KMS double, static test credentials from the default chain', async () => {
    const { secretKey64, address } = generateKeypair();
    const kms = await kmsDouble({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
    undo.push(() => kms.close());
    const { dir, cleanup } = tempDir();
    undo.push(cleanup);
    await claimsAndDepositsOnce(dir, address, `{ aws_kms: { key_id: "${KMS_KEY_ID}", region: eu-west-1, endpoint: "${kms.url}" } }`, { ...KMS_TEST_ENV, HOME: dir });
    expect(kms.seen.filter((r) => r.target === 'TrentService.Sign')).toHaveLength(2);
  }, 60_000);

  it.skipIf(MODULE === undefined)('pkcs11: CKM_EDDSA on a SoftHSM2 token the test creates, the PIN read from the environment', async () => {
    const { dir, cleanup } = tempDir();
    undo.push(cleanup);
    const conf = softhsmConf(join(dir, 'hsm'));
    const address = makeToken(conf, 'autoclaim-e2e', '5678');
    const key = `{ pkcs11: { module: ${MODULE}, token: autoclaim-e2e, label: wk, pin_env: HSM_PIN, sessions: 2 } }`;
    await claimsAndDepositsOnce(dir, address, key, { SOFTHSM2_CONF: conf, HSM_PIN: '5678' });
  }, 60_000);

  it.runIf(MODULE === undefined)(SKIP_REASON, () => {
    expect(MODULE).toBeUndefined();
  });
});
