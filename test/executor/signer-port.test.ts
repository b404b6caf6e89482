// The executor and the signer port (SPEC §7): the step is recorded `sending` without a signature,
// the wallet's signer is asked under a deadline, its answer is checked (message and key), and only
// then is the signed request recorded and sent. A refusal is recorded before sending, an unanswered
// signer leaves the step planned, a wrong signature is never sent, and a step left `sending`
// without a signature is provably unsent at recovery.
// Real code: runWalletCycle → PlanExecutor, a real SQLite file, the sandbox on loopback.
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ApiClient, createDispatcher } from '../../src/api/client.js';
import { RateLimiter } from '../../src/api/rate-limit.js';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import type { Rule, WalletConfig } from '../../src/domain.js';
import { createEvents } from '../../src/events.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { openStore, type SyncStore } from '../../src/store/index.js';
import { ClaimDoubtWatch } from '../../src/executor/claim-doubt.js';
import { PlanExecutor } from '../../src/executor/executor.js';
import type { FailpointName } from '../../src/executor/failpoints.js';
import { recoverInFlight } from '../../src/executor/recovery.js';
import { runWalletCycle } from '../../src/executor/wallet-cycle.js';
import { inProcessSigner } from '../../src/keys/backends/in-process.js';
import { messageFor, templatesOf } from '../../src/keys/message.js';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { SignerRefused, type WalletSigner } from '../../src/keys/port.js';
import { apiConfig } from '../api/helpers.js';
import { CANARY_API_KEY, parseEvents, tempDir } from '../e2e/helpers.js';
import { Lines } from '../reliability/trust-rig.js';

const SOL = 1_000_000_000n;
const realClock = { now: () => Date.now(), monotonic: () => performance.now() };
const rule: Rule = {
  name: 'claim',
  id: 'claim',
  when: [{ field: 'pending_sol', op: 'gte', value: SOL / 2n }],
  do: [{ kind: 'claim' }],
  limits: { oncePerEpoch: true, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
};
const templates = templatesOf(DEFAULT_ENDPOINTS);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function world() {
  const { dir, cleanup } = tempDir('autoclaim-signer-port-');
  cleanups.push(cleanup);
  const { secretKey64, address } = generateKeypair();
  const sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    defaultAccrualLamportsPerSec: 0n,
    wallets: [{ address, pendingLamports: SOL, accrualLamportsPerSec: 0n, balanceLamports: 0n }],
  });
  cleanups.push(() => sandbox.close());
  const out = new Lines();
  const logger = createLogger({ level: 'debug', redactor: new Redactor().add(CANARY_API_KEY), destination: out });
  const config = apiConfig({ baseUrl: sandbox.url, readAttempts: 1, timeoutMs: 10_000 });
  const dispatcher = createDispatcher(config);
  cleanups.push(() => dispatcher.close());
  const client = new ApiClient({ config, apiKey: CANARY_API_KEY, dispatcher, limiter: new RateLimiter({ perMinute: 0, burst: 100, clock: realClock }), clock: realClock, logger });
  const store: SyncStore = openStore(join(dir, 'autoclaim.db'), { logger, clock: realClock, redactor: new Redactor() });
  cleanups.push(() => store.close());
  const wallet: WalletConfig = { name: 'w', address, key: { file: 'unused.json' }, rules: [rule.name] };
  const key = signerFromSeed(secretKey64.slice(0, 32));
  const settings = () => ({ rules: [rule], safety: { maxLamportsPerAction: 100n * SOL } });
  const answered: Array<{ outcome: string; code?: string; backend: string }> = [];
  const events = createEvents();
  events.on('signer:answered', (e) => void answered.push(e));
  const process = (signer: WalletSigner, failpoint: (name: FailpointName) => void = () => {}) => {
    const executor = new PlanExecutor({ store, api: client, signers: new Map([[address, signer]]), config: settings, clock: realClock, logger, failpoint, events, signDeadlineMs: 200 });
    return () => runWalletCycle({ api: client, store, executor, config: settings, clock: realClock, logger, failpoint, dry: false, claimDoubt: new ClaimDoubtWatch() }, wallet);
  };
  const claims = () => Object.values(sandbox.stats().byOp['claim'] ?? {}).reduce((a, b) => a + b, 0);
  const step = () => store.listPlans({ address })[0]?.steps[0];
  return { address, key, store, process, claims, step, answered, logger, events: () => parseEvents(out.text) };
}

/** A signer that answers with `answer` (or rejects with it). */
function fake(address: string, answer: (message: string) => Promise<{ message: string; signature: Uint8Array }>): WalletSigner {
  return { address, backend: 'vault', sign: (action) => answer(messageFor(templates, action)) };
}

it('signs through the port, and the sandbox verifies the signature', async () => {
  const w = await world();
  await w.process(inProcessSigner(w.key))();
  expect(w.step()?.state).toBe('acknowledged');
  expect(w.claims()).toBe(1);
  expect(w.answered).toMatchObject([{ outcome: 'signed', backend: 'file' }]);
});

it('a signer that refuses: the step is refused before sending, with its code, and nothing is sent', async () => {
  const w = await world();
  await w.process(fake(w.address, () => Promise.reject(new SignerRefused('POLICY_DAY_CAP', 'over the day cap'))))();
  expect(w.step()?.state).toBe('rejected');
  expect(w.step()?.error).toContain('POLICY_DAY_CAP');
  expect(w.claims()).toBe(0);
  expect(w.events().filter((e) => e['event'] === 'action.refused')).toMatchObject([{ reason: 'signer', code: 'POLICY_DAY_CAP', backend: 'vault' }]);
  expect(w.events().filter((e) => e['event'] === 'action.sent')).toEqual([]);
  expect(w.answered).toMatchObject([{ outcome: 'refused', code: 'POLICY_DAY_CAP' }]);
  // Refused before sending spends nothing: the day's history holds no sent claim.
  expect(w.store.stepAttempts(w.step()!.id)).toMatchObject([{ outcome: 'not_sent' }]);
});

it('a signer that does not answer within the deadline: the step is back to planned, nothing sent', async () => {
  const w = await world();
  await w.process(fake(w.address, () => new Promise(() => {})))();
  expect(w.step()?.state).toBe('planned');
  expect(w.claims()).toBe(0);
  expect(w.answered).toMatchObject([{ outcome: 'unanswered', code: 'SIGNER_TIMEOUT' }]);
  // Signed afresh later by a signer that answers.
  await w.process(inProcessSigner(w.key))();
  expect(w.step()?.state).toBe('acknowledged');
  expect(w.claims()).toBe(1);
});

it('a signature by another key is refused, never sent', async () => {
  const w = await world();
  const other = signerFromSeed(generateKeypair().secretKey64.slice(0, 32));
  await w.process(fake(w.address, (message) => Promise.resolve({ message, signature: other.sign(new TextEncoder().encode(message)) })))();
  expect(w.step()?.state).toBe('rejected');
  expect(w.step()?.error).toContain('BAD_SIGNATURE');
  expect(w.claims()).toBe(0);
});

it('a valid signature over other bytes than the action renders to is refused, never sent', async () => {
  const w = await world();
  await w.process(
    fake(w.address, (message) => {
      const other = `${message}0`;
      return Promise.resolve({ message: other, signature: w.key.sign(new TextEncoder().encode(other)) });
    }),
  )();
  expect(w.step()?.state).toBe('rejected');
  expect(w.step()?.error).toContain('BAD_SIGNATURE');
  expect(w.claims()).toBe(0);
});

it('a step left `sending` before its signer answered is provably unsent: recovery returns it to planned, and it is claimed once', async () => {
  const w = await world();
  const crashed = w.process(inProcessSigner(w.key), (name) => {
    if (name === 'before_signature') throw new Error('killed');
  });
  await expect(crashed()).rejects.toThrow('killed');
  expect(w.step()?.state).toBe('sending');
  expect(w.step()?.request?.body).toBe('');
  const recovered = await recoverInFlight({ store: w.store, clock: realClock, logger: w.logger });
  expect(recovered).toBe(1);
  expect(w.step()?.state).toBe('planned');
  await w.process(inProcessSigner(w.key))();
  expect(w.step()?.state).toBe('acknowledged');
  expect(w.claims()).toBe(1);
});
