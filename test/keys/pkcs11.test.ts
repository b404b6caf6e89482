// The PKCS#11 backend against SoftHSM2 (Debian's softhsm2, installed by .ci/run): a token created
// by the test under its own SOFTHSM2_CONF, an Ed25519 key generated on it (sensitive, never
// extractable), signatures by CKM_EDDSA over the message rendered from the action, verified against
// the address; a wrong PIN, a missing key and a module path that does not exist are refused with
// their codes. Skipped, saying so, only when the SoftHSM2 module is not installed.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { Pkcs11Signer } from '../../src/keys/backends/pkcs11.js';
import { checkSignResult } from '../../src/keys/check.js';
import { templatesOf } from '../../src/keys/message.js';
import type { SignAction } from '../../src/keys/port.js';
import { Redactor } from '../../src/log/redact.js';
import { tempDir } from '../e2e/helpers.js';
import { makeToken, MODULE, softhsmConf } from '../support/softhsm.js';

const templates = templatesOf(DEFAULT_ENDPOINTS);
const PIN = '5678';
let dir = '';
// Put back after the file: it shares its worker with other files (vitest.config.ts).
const savedConf = process.env['SOFTHSM2_CONF'];
let cleanup = (): void => {};
let address = '';
const open: Pkcs11Signer[] = [];

beforeAll(() => {
  if (MODULE === undefined) return;
  ({ dir, cleanup } = tempDir('autoclaim-pkcs11-'));
  // Read by SoftHSM2 at C_Initialize, in this process and in the tools.
  process.env['SOFTHSM2_CONF'] = softhsmConf(dir);
  address = makeToken(process.env['SOFTHSM2_CONF'], 'autoclaim-test', PIN);
  makeToken(process.env['SOFTHSM2_CONF'], 'autoclaim-pin', PIN);
});

afterAll(async () => {
  for (const s of open) await s.close();
  cleanup();
  if (savedConf === undefined) delete process.env['SOFTHSM2_CONF'];
  else process.env['SOFTHSM2_CONF'] = savedConf;
});

function hsm(opts: { token?: string; label?: string; pin?: string; module?: string; address?: string; sessions?: number } = {}): Pkcs11Signer {
  const s = new Pkcs11Signer(
    { module: opts.module ?? MODULE!, token: opts.token ?? 'autoclaim-test', label: opts.label ?? 'wk', pinEnv: 'HSM_PIN', sessions: opts.sessions ?? 2 },
    opts.address ?? address,
    { env: { HSM_PIN: opts.pin ?? PIN }, templates, redactor: new Redactor() },
  );
  open.push(s);
  return s;
}

const deposit = (wallet: string, n: number): SignAction => ({ op: 'deposit', wallet, symbol: 'SOL2X', amount: `${n + 1}.5`, ts: 1764000000 + n });

it.skipIf(MODULE === undefined)('signs with CKM_EDDSA on the token; every signature verifies against the address, on a pool of sessions', async () => {
  const s = hsm({ sessions: 2 });
  await s.connect(AbortSignal.timeout(10_000));
  // More signatures at once than sessions: each waits for a free session, none shares one.
  const results = await Promise.all(Array.from({ length: 12 }, (_, n) => s.sign(deposit(address, n), AbortSignal.timeout(10_000))));
  results.forEach((r, n) => {
    expect(r.message).toBe(`${address}|SOL2X|${n + 1}.5|${1764000000 + n}`);
    expect(checkSignResult(address, r.message, r)).toHaveLength(64);
  });
});

it.skipIf(MODULE === undefined)('refuses a wrong PIN (PKCS11_PIN), never printing it', async () => {
  const err = await hsm({ token: 'autoclaim-pin', pin: '0000' }).connect(AbortSignal.timeout(10_000)).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: 'PKCS11_PIN' });
  expect((err as Error).message).not.toContain('0000');
});

it.skipIf(MODULE === undefined)('refuses a key that is not on the token (PKCS11_NO_KEY) and a token that is not there (PKCS11_NO_TOKEN)', async () => {
  await expect(hsm({ label: 'missing' }).connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'PKCS11_NO_KEY' });
  await expect(hsm({ token: 'no-such-token' }).connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'PKCS11_NO_TOKEN' });
});

it.skipIf(MODULE === undefined)('refuses a module path that does not exist (PKCS11_MODULE)', async () => {
  await expect(hsm({ module: join(dir, 'no-such-module.so') }).connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'PKCS11_MODULE' });
});

it.skipIf(MODULE === undefined)('a key of another address is refused at connect (KEY_MISMATCH)', async () => {
  await expect(hsm({ address: '11111111111111111111111111111112' }).connect(AbortSignal.timeout(10_000))).rejects.toMatchObject({ code: 'KEY_MISMATCH' });
});

it.runIf(MODULE === undefined)('SoftHSM2 is not installed (apt-get install softhsm2 opensc): the PKCS#11 tests are skipped', () => {
  expect(MODULE).toBeUndefined();
});

// Regression: C_Initialize without CKF_OS_LOCKING_OK let SoftHSM2 assume a single thread while
// the async C_Sign ran on several libuv threads at once: its heap was corrupted (a segfault or
// "malloc(): unaligned fastbin chunk detected") with 4 sessions under load.
it.skipIf(MODULE === undefined)('many signatures at once on 4 sessions: every one verifies, the process survives', async () => {
  const s = hsm({ sessions: 4 });
  await s.connect(AbortSignal.timeout(10_000));
  const results = await Promise.all(Array.from({ length: 2000 }, (_, n) => s.sign(deposit(address, n), AbortSignal.timeout(30_000))));
  results.forEach((r) => expect(checkSignResult(address, r.message, r)).toHaveLength(64));
}, 60_000);
