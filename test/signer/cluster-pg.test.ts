// A cluster's signers share caps through one PostgreSQL journal (signer.yaml `state.url`): two real
// `autoclaim signer` processes on one throwaway database, a hostile client asking each at once for a
// claim of the same wallet and epoch and for deposits that together exceed the day cap — exactly
// one claim is signed and the cap holds across both. And a COMMIT whose answer is lost (a network
// that goes silent under it) hands out nothing.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain.js';
import type { WalletSigner } from '../../src/keys/port.js';
import { connectSignerKeys, loadSignerConfig } from '../../src/signer/config.js';
import { PostgresJournal } from '../../src/signer/journal-postgres.js';
import { createSignerHandler } from '../../src/signer/service.js';
import { buildOnce } from '../e2e/build.js';
import { spawnCli, type Child } from '../e2e/helpers.js';
import { captureLog } from '../support/log.js';
import { createDatabase } from '../support/postgres.js';
import { tcpProxy } from '../support/tcp-proxy.js';
import { codeOf, RawClient, signerSetup, signerYaml, type SignerSetup } from './support.js';

const SOL = 1_000_000_000n;
const today = () => new Date().toISOString().slice(0, 10);
const nowTs = () => Math.floor(Date.now() / 1000);

describe('signers sharing one PostgreSQL journal', () => {
  let setup: SignerSetup | undefined;
  const children: Child[] = [];
  const undo: Array<() => Promise<void> | void> = [];

  // buildOnce, not a build of its own: under `npm test` dist/ is built already, and rewriting it
  // here would change files under the CLI processes other test files are running.
  beforeAll(() => buildOnce(), 120_000);

  afterEach(async () => {
    for (const c of children.splice(0)) await c.stop('SIGTERM');
    for (const u of undo.splice(0).reverse()) await u();
    setup?.cleanup();
  });

  it('two signer processes: exactly one claim per wallet and epoch, and the day cap held across both', async () => {
    const url = await createDatabase();
    setup = signerSetup({ policy: { perAction: '10', perDay: '25' }, state: `url: ${url}` });
    const s = setup;
    // The second signer: the same keys and policy, its own socket, the same journal.
    const second = join(s.dir, 'second.yaml');
    writeFileSync(second, signerYaml({ socket: join(s.dir, 'second.sock'), wallets: s.wallets, policy: { perAction: '10', perDay: '25' }, state: `url: ${url}` }));
    const start = async (config: string): Promise<void> => {
      const child = spawnCli(['signer', '--config', config], { cwd: s.dir });
      children.push(child);
      await child.waitFor((e) => e.event === 'signer.started');
    };
    await Promise.all([start(s.configFile), start(second)]);
    const a = await RawClient.connect(s.socket);
    const b = await RawClient.connect(join(s.dir, 'second.sock'));
    undo.push(() => a.close());
    undo.push(() => b.close());
    const w = s.wallets[0]!;
    const ts = nowTs();
    const claim = (id: string, dt: number) => ({ id, key: 'treasury', op: 'claim', wallet: w.address, ts: ts + dt, epoch: today() });
    const deposit = (id: string, amount: string, dt: number) => ({ id, key: 'treasury', op: 'deposit', wallet: w.address, symbol: 'SOL2X', amount, ts: ts - dt, epoch: today() });

    // A claim for one epoch at each signer, several times over, all at once: one is signed.
    const claims = await Promise.all([a.ask(claim('a1', 1)), b.ask(claim('b1', 2)), a.ask(claim('a2', 3)), b.ask(claim('b2', 4))]);
    expect(claims.filter((c) => codeOf(c) === undefined)).toHaveLength(1);
    expect(claims.filter((c) => codeOf(c) === 'ALREADY_SIGNED_EPOCH')).toHaveLength(3);

    // 10 SOL four times, two at each signer, at once: 20 of the 25 a day fit, 30 do not.
    const deposits = await Promise.all([a.ask(deposit('d1', '10', 1)), b.ask(deposit('d2', '10', 2)), a.ask(deposit('d3', '10', 3)), b.ask(deposit('d4', '10', 4))]);
    expect(deposits.filter((d) => codeOf(d) === undefined)).toHaveLength(2);
    expect(deposits.filter((d) => codeOf(d) === 'POLICY_DAY_CAP')).toHaveLength(2);
    // What is left of the cap, once, at either signer.
    expect(codeOf(await b.ask(deposit('d5', '5', 5)))).toBeUndefined();
    expect(codeOf(await a.ask(deposit('d6', '0.000000001', 6)))).toBe('POLICY_DAY_CAP');
    expect(codeOf(await b.ask(deposit('d7', '0.000000001', 7)))).toBe('POLICY_DAY_CAP');

    const journal = await PostgresJournal.open(url, {});
    undo.push(() => journal.close());
    const rows = await journal.records();
    expect(rows.filter((r) => r.op === 'claim')).toHaveLength(1);
    expect(rows.reduce((sum, r) => sum + (r.amountLamports ?? 0n), 0n)).toBe(25n * SOL);
  }, 90_000);

  it('a COMMIT whose answer is lost: SIGNER_UNAVAILABLE, nothing handed out; afterwards at most the one claim the policy allows', async () => {
    const url = new URL(await createDatabase());
    const proxy = await tcpProxy({ host: url.hostname, port: Number(url.port) });
    undo.push(() => proxy.close());
    const viaProxy = new URL(url);
    viaProxy.port = String(proxy.port);
    setup = signerSetup({ state: `url: ${viaProxy.toString()}\n  query_timeout: 500ms` });
    const log = captureLog('debug');
    const loaded = loadSignerConfig(setup.configFile, { env: {}, cwd: setup.dir, loadKeys: { redactor: log.redactor } });
    expect(loaded.errors).toEqual([]);
    const config = loaded.config!;
    expect(await connectSignerKeys(config, loaded.signers!)).toEqual([]);
    const real = loaded.signers!.get('treasury')!;
    let silence = true;
    // The network goes silent once the signature is made, before the COMMIT is sent.
    const cut: WalletSigner = {
      address: real.address,
      backend: real.backend,
      sign: async (action, signal) => {
        const r = await real.sign(action, signal);
        if (silence) proxy.blackhole(true);
        return r;
      },
    };
    const journal = await PostgresJournal.open(config.stateUrl!, { queryTimeoutMs: config.queryTimeoutMs });
    undo.push(() => journal.close());
    const handler = createSignerHandler({ config, signers: new Map([['treasury', cut]]), journal, clock: systemClock, logger: log.logger, failpoint: () => {} });
    const w = setup.wallets[0]!;
    const claim = { id: 'c1', key: 'treasury', op: 'claim', wallet: w.address, ts: nowTs(), epoch: today() };
    const lost = JSON.parse(await handler.answer(JSON.stringify(claim))) as Record<string, unknown>;
    expect(codeOf(lost)).toBe('SIGNER_UNAVAILABLE');
    expect(lost.signature).toBeUndefined();
    // Lost, not refused: the batch failed at COMMIT, after the signature was made.
    expect(JSON.stringify(log.events('signer.journal_failed'))).toContain('the answer to COMMIT was lost');

    silence = false;
    proxy.blackhole(false);
    // The COMMIT may have reached the server or not. Either way the policy holds: a claim for the
    // epoch is signed now only if none was recorded, and the journal ends with exactly one.
    let retried: Record<string, unknown> = {};
    for (let i = 0; i < 20; i++) {
      retried = JSON.parse(await handler.answer(JSON.stringify({ ...claim, id: 'c2', ts: claim.ts + 1 }))) as Record<string, unknown>;
      if (codeOf(retried) !== 'SIGNER_UNAVAILABLE') break; // the pool replaced the broken connection
    }
    expect([undefined, 'ALREADY_SIGNED_EPOCH']).toContain(codeOf(retried));
    expect((await journal.records()).filter((r) => r.op === 'claim')).toHaveLength(1);
  }, 60_000);
});
