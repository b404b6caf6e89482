// The PKCS#11 backend when the token fails under a running daemon (helper 36), against SoftHSM2:
// sessions that die under it, and a PIN the token refuses. A file of its own: the PIN test counts
// the module's C_Login calls, which pkcs11js copies onto each instance when it is made, so the spy
// must be in place before this process makes its first one.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { systemClock } from '../../src/domain.js';
import { askSigner } from '../../src/executor/signing-guard.js';
import { Pkcs11Signer } from '../../src/keys/backends/pkcs11.js';
import { messageFor, templatesOf } from '../../src/keys/message.js';
import type { SignAction } from '../../src/keys/port.js';
import { Redactor } from '../../src/log/redact.js';
import { tempDir } from '../e2e/helpers.js';
import { makeToken, MODULE, softhsmConf } from '../support/softhsm.js';

const require = createRequire(import.meta.url);
const P = require('pkcs11js') as typeof import('pkcs11js');
// C_Login is the native class's, which PKCS11 extends; spied before any instance is made.
const login = vi.spyOn(Object.getPrototypeOf(P.PKCS11.prototype) as InstanceType<typeof P.PKCS11>, 'C_Login');

const templates = templatesOf(DEFAULT_ENDPOINTS);
const PIN = '5678';
let cleanup = (): void => {};
let address = '';
const open: Pkcs11Signer[] = [];

beforeAll(() => {
  if (MODULE === undefined) return;
  let dir: string;
  ({ dir, cleanup } = tempDir('autoclaim-pkcs11-faults-'));
  process.env['SOFTHSM2_CONF'] = softhsmConf(dir);
  address = makeToken(process.env['SOFTHSM2_CONF'], 'autoclaim-test', PIN);
  makeToken(process.env['SOFTHSM2_CONF'], 'autoclaim-pin', PIN);
});

afterAll(async () => {
  for (const s of open) await s.close();
  login.mockRestore();
  cleanup();
});

function hsm(opts: { token?: string; pin?: string } = {}): Pkcs11Signer {
  const s = new Pkcs11Signer({ module: MODULE!, token: opts.token ?? 'autoclaim-test', label: 'wk', pinEnv: 'HSM_PIN', sessions: 2 }, address, {
    env: { HSM_PIN: opts.pin ?? PIN },
    templates,
    redactor: new Redactor(),
  });
  open.push(s);
  return s;
}

const deposit = (n: number): SignAction => ({ op: 'deposit', wallet: address, symbol: 'SOL2X', amount: `${n + 1}.5`, ts: 1764000000 + n });
const ask = (s: Pkcs11Signer, n: number) => askSigner(s, deposit(n), messageFor(templates, deposit(n)), 10_000, systemClock);

/** What another application of the process, or a token pulled and put back, does to our sessions. */
function closeAllSessions(token: string): void {
  const lib = new P.PKCS11();
  lib.load(MODULE!);
  try {
    lib.C_Initialize({ flags: P.CKF_OS_LOCKING_OK });
  } catch (err) {
    if (!(err instanceof P.Pkcs11Error) || err.code !== P.CKR_CRYPTOKI_ALREADY_INITIALIZED) throw err;
  }
  const slot = lib.C_GetSlotList(true).find((s) => lib.C_GetTokenInfo(s).label.trim() === token);
  lib.C_CloseAllSessions(slot!);
}

// Each signature failed CKR_SESSION_HANDLE_INVALID, a refusal (PKCS11_SIGN), until a restart: a
// deposit after its claim lost its epoch, every wallet of the token refused.
it.skipIf(MODULE === undefined)('sessions closed under it: unavailable (not refused), then opened again, logged in, the key checked, signing', async () => {
  const s = hsm();
  await s.connect(AbortSignal.timeout(10_000));
  expect(await ask(s, 0)).toMatchObject({ ok: true });
  closeAllSessions('autoclaim-test');
  expect(await ask(s, 1)).toMatchObject({ ok: false, unanswered: true, code: 'SIGNER_UNAVAILABLE' });
  const before = login.mock.calls.length;
  // Several at once share one opening, each on a session of its own.
  const again = await Promise.all([2, 3, 4, 5].map((n) => ask(s, n)));
  for (const v of again) expect(v).toMatchObject({ ok: true });
  expect(login.mock.calls.length - before).toBe(1);
});

// Each signature logged in again with the refused PIN; a real HSM locks its user PIN after a few
// (SoftHSM2 does not count), and only its security officer can unlock it.
it.skipIf(MODULE === undefined)('a PIN the token refuses is tried once, not at every signature', async () => {
  const s = hsm({ token: 'autoclaim-pin', pin: '0000' });
  const before = login.mock.calls.length;
  for (let n = 0; n < 3; n++) {
    // Not a judgement of the action: the step waits (and the alert says why) until a reload reads a PIN the token takes.
    const v = await ask(s, n);
    expect(v).toMatchObject({ ok: false, unanswered: true, code: 'SIGNER_UNAVAILABLE' });
    expect(v.ok ? '' : v.detail).toMatch(/the PIN for token autoclaim-pin is wrong/);
  }
  expect(login.mock.calls.length - before).toBe(1);
});
