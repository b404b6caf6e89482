// Message templates: every placeholder renders, {op} always and {epoch} only when the plan knows
// its epoch; and a template with {epoch} and {op} signed here verifies on the sandbox's side.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { DEFAULT_ENDPOINTS, TEMPLATE_VARIABLES } from '../../src/api/endpoints.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { prepareSigned } from '../../src/api/signed-request.js';
import { decodeSignature, generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import { verifySignature } from '../../src/keys/verify.js';
import { systemClock, type ApiConfig, type SignedOp } from '../../src/domain.js';
import { AutoclaimError } from '../../src/errors.js';
import { silentLogger } from '../../src/log/logger.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { apiConfig } from './helpers.js';

const kp = generateKeypair();
const signer = signerFromSeed(kp.secretKey64.slice(0, 32));
const WALLET = kp.address;
const NOW_MS = 1_750_000_000_123;
const TS = '1750000000';

function withMessage(op: SignedOp, message: string): ApiConfig {
  const base = apiConfig({ baseUrl: 'http://127.0.0.1:9/v1' });
  return { ...base, endpoints: { ...base.endpoints, [op]: { ...DEFAULT_ENDPOINTS[op], message } } };
}

describe('prepareSigned renders each template variable', () => {
  const deposit = { op: 'deposit' as const, wallet: WALLET, symbol: 'SOL2X', amount: 1_500_000_000n, epoch: '2025-06-15' };
  const cases: Array<[variable: string, template: string, expected: string]> = [
    ['wallet', '{wallet}', WALLET],
    ['ts', '{ts}', TS],
    ['epoch', '{epoch}', '2025-06-15'],
    ['symbol', '{symbol}', 'SOL2X'],
    ['amount', '{amount}', '1.5'],
    ['op', '{op}', 'deposit'],
  ];

  it('has a case for every variable a template may name', () => {
    expect(cases.map((c) => c[0]).sort()).toEqual([...TEMPLATE_VARIABLES].sort());
  });

  it.each(cases)('{%s}', (_name, template, expected) => {
    const p = prepareSigned(withMessage('deposit', `<${template}>`), 'http://h/v1', deposit, signer, NOW_MS);
    expect(p.message).toBe(`<${expected}>`);
    expect(verifySignature(new TextEncoder().encode(p.message), decodeSignature(p.signature, 'base58'), WALLET)).toBe(true);
  });

  it('renders them all together, the ts the same integer as the header', () => {
    const p = prepareSigned(withMessage('deposit', '{op}:{wallet}|{symbol}|{amount}|{ts}|{epoch}'), 'http://h/v1', deposit, signer, NOW_MS);
    expect(p.message).toBe(`deposit:${WALLET}|SOL2X|1.5|${TS}|2025-06-15`);
    expect(p.headers['x-svc-ts']).toBe(TS);
  });

  it('fills {op} for a claim without being given it, and {epoch} when the plan passes one', () => {
    const config = withMessage('claim', '{op}|{wallet}|{ts}|{epoch}');
    const p = prepareSigned(config, 'http://h/v1', { op: 'claim', wallet: WALLET, epoch: '2025-06-15' }, signer, NOW_MS);
    expect(p.message).toBe(`claim|${WALLET}|${TS}|2025-06-15`);
  });

  it('refuses to sign {epoch} without an epoch, before anything is signed', () => {
    const config = withMessage('claim', '{wallet}|{ts}|{epoch}');
    const signed: Uint8Array[] = [];
    const spy = { address: WALLET, sign: (m: Uint8Array) => (signed.push(m), signer.sign(m)) };
    let err: unknown;
    try {
      prepareSigned(config, 'http://h/v1', { op: 'claim', wallet: WALLET }, spy, NOW_MS);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AutoclaimError);
    expect((err as AutoclaimError).code).toBe('INVALID_ACTION');
    expect((err as Error).message).toMatch(/claim message template signs \{epoch\}, but no epoch is known/);
    expect(signed).toHaveLength(0);
  });

  it('needs no epoch when the template does not sign one', () => {
    const p = prepareSigned(withMessage('claim', '{wallet}|{ts}'), 'http://h/v1', { op: 'claim', wallet: WALLET }, signer, NOW_MS);
    expect(p.message).toBe(`${WALLET}|${TS}`);
  });
});

describe('a template with {epoch} and {op}, against the sandbox', () => {
  let sandbox: Sandbox | undefined;
  let dispatcher: ReturnType<typeof createDispatcher> | undefined;
  afterEach(async () => {
    await dispatcher?.destroy();
    await sandbox?.close();
  });

  it('verifies on the server when both sides sign the same words', async () => {
    const message = '{op}|{wallet}|{ts}|{epoch}';
    sandbox = await startSandbox({
      apiKey: 'sandbox-test-key-123456',
      claimMessage: message,
      wallets: [{ address: WALLET, pendingLamports: 1_000_000_000n, accrualLamportsPerSec: 0n }],
    });
    const config = { ...withMessage('claim', message), baseUrl: sandbox.url };
    dispatcher = createDispatcher(config);
    const api = new ApiClient({
      config,
      apiKey: 'sandbox-test-key-123456',
      dispatcher,
      limiter: new RateLimiter({ perMinute: 0, burst: 1, clock: systemClock }),
      clock: systemClock,
      logger: silentLogger(),
    });
    const epoch = sandbox.world.epoch();
    const res = await api.send(api.prepare({ op: 'claim', wallet: WALLET, epoch }, signer, Date.now()));
    expect(res.body.status).toBe('success');
    expect(res.body.claimedLamports).toBe(1_000_000_000n);
  });
});
