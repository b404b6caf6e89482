// Helper 36: a key backend failing under `autoclaim run` (a real process) between a claim and its
// deposit. The Vault token runs out (its TTL) right after the claim's signature: the deposit is not
// refused but held — back to planned at each turn, nothing sent, not one request more — the
// operator is told once (alert signer_unavailable naming the wallet and its backend), polling goes
// on, and once Vault Agent writes a renewed token to token_file the deposit is signed and sent,
// exactly once, and the alert closes. Before: the deposit was refused (VAULT_DENIED) and, its claim
// spent, once_per_epoch held the rule for the epoch: the claimed SOL sat undeposited.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { generateKeypair } from '../../src/keys/signer.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { closedPort } from '../support/net.js';
import { TOKEN, transit } from '../support/vault-transit.js';
import { buildOnce } from './build.js';
import { CANARY_API_KEY, configYaml, spawnCli, tempDir, type Child, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;
const undo: Array<() => Promise<void> | void> = [];
let child: Child | undefined;

beforeAll(() => buildOnce(), 120_000);

afterEach(async () => {
  await child?.stop('SIGTERM');
  child = undefined;
  for (const u of undo.splice(0).reverse()) await u();
});

it('vault token expired between claim and deposit: the deposit is held, told once, and sent once a renewed token is in token_file', async () => {
  const { secretKey64, address } = generateKeypair();
  const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
  undo.push(() => t.close());
  const sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [{ address, pendingLamports: 1n * SOL, accrualLamportsPerSec: 0n, balanceLamports: 0n }],
  });
  undo.push(() => sandbox.close());
  const { dir, cleanup } = tempDir();
  undo.push(cleanup);
  const tokenFile = join(dir, 'vault-token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const wallet: TestWallet = { name: 'treasury', address, keyFile: '', secretKey64: new Uint8Array() };
  const key = `{ vault: { address: "${t.url}", key: treasury, token_file: ${tokenFile} } }`;
  const config = join(dir, 'autoclaim.yaml');
  const port = await closedPort();
  const extra = `metrics:\n  listen: 127.0.0.1:${port}\n`;
  writeFileSync(config, configYaml({ baseUrl: sandbox.url, wallets: [wallet], extra }).replace('key: { file: ./keys/treasury.json }', `key: ${key}`));
  const readyz = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    return { status: res.status, body: (await res.json()) as { ready: boolean; reasons: string[] } };
  };

  t.expireAfterSigns(1);
  const c = spawnCli(['run', '--config', config], { cwd: dir, env: {} });
  child = c;
  const firstDeferral = await c.waitFor((e) => e.event === 'action.deferred');
  expect(firstDeferral).toMatchObject({ reason: 'signer', code: 'SIGNER_UNAVAILABLE', backend: 'vault' });
  const opened = await c.waitFor((e) => e.event === 'alert.opened' && e.alert === 'signer_unavailable');
  expect(opened).toMatchObject({ level: 'error', wallet: 'treasury' });
  expect(String(opened.msg)).toMatch(/vault signer has not signed/);
  // Not ready while it lasts: the wallet's steps cannot be signed, and /readyz says whose and why.
  const down = await readyz();
  expect(down.status).toBe(503);
  expect(down.body.reasons).toEqual([expect.stringMatching(/^signer: 1 wallet\(s\) whose signer has not answered: treasury \(vault, SIGNER_UNAVAILABLE, since /)]);
  // Turns go on (polls and the deposit asked again), and the alert stays one.
  const seen = c.events().length;
  await c.waitFor((e, i) => e.event === 'action.deferred' && i > seen);
  await c.waitFor((e, i) => e.event === 'action.deferred' && i > seen + 2);
  expect(c.events().filter((e) => e.event === 'alert.opened')).toHaveLength(1);
  expect(c.events().filter((e) => e.event === 'action.refused')).toEqual([]);
  expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim']);

  // Vault Agent renews: a new token in the sink file.
  const renewed = 'hvs.CANARYrenewedtoken9876543210fedcba';
  t.accept([renewed]);
  writeFileSync(tokenFile, `${renewed}\n`, { mode: 0o600 });
  await c.waitFor((e) => e.event === 'action.acknowledged' && e.kind === 'deposit', 20_000);
  await c.waitFor((e) => e.event === 'alert.closed' && e.alert === 'signer_unavailable');
  expect(await readyz()).toMatchObject({ status: 200, body: { ready: true, reasons: [] } });
  expect(sandbox.ledger().map((e) => [e.op, e.amountLamports])).toEqual([
    ['claim', 1n * SOL],
    ['deposit', SOL / 2n],
  ]);
  expect(c.stdout()).not.toContain('CANARYrenewed');
  expect(c.stdout()).not.toContain(TOKEN);
}, 90_000);
