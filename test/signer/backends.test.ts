// The signer service holding keys that live elsewhere — a Vault transit key (the double of
// test/support/vault-transit.ts), an AWS KMS key (test/support/kms-double.ts) and a PKCS#11 key on a SoftHSM2 token the test creates — through
// the same signer port and backends as the daemon (keys/backends): a claim and a deposit signed over
// its socket and accepted by the sandbox, which verifies every signature. And what happens when the
// backend fails: the request is refused and nothing is journalled, so the daemon may ask again.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterEach, describe, expect, it } from 'vitest';
import { joinUrl } from '../../src/api/signed-request.js';
import { systemClock } from '../../src/domain.js';
import { inProcessSigner } from '../../src/keys/backends/in-process.js';
import { SignerRefused, type SignAction, type WalletSigner } from '../../src/keys/port.js';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import { verifySignature } from '../../src/keys/verify.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { connectSignerKeys, loadSignerConfig } from '../../src/signer/config.js';
import { SqliteJournal, type SignerJournal } from '../../src/signer/journal.js';
import { createSignerHandler } from '../../src/signer/service.js';
import { listenSigner } from '../../src/signer/server.js';
import { tempDir, type TestWallet } from '../e2e/helpers.js';
import { KMS_KEY_ID, KMS_TEST_ENV, kmsDouble } from '../support/kms-double.js';
import { captureLog } from '../support/log.js';
import { makeToken, MODULE, SKIP_REASON, softhsmConf } from '../support/softhsm.js';
import { TOKEN, transit } from '../support/vault-transit.js';
import { codeOf, RawClient, sendToSandbox, signerYaml } from './support.js';

const SOL = 1_000_000_000n;
const nowTs = () => Math.floor(Date.now() / 1000);
const today = () => new Date().toISOString().slice(0, 10);

describe('the signer service with keys held by a backend', () => {
  const undo: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const u of undo.splice(0).reverse()) await u();
  });

  /** A signer.yaml with one key `treasury` of `address` held as `key`, and the service started in this process on its socket. */
  async function service(address: string, key: string, env: NodeJS.ProcessEnv, over: { journal?: (j: SqliteJournal) => SignerJournal; signer?: (s: WalletSigner) => WalletSigner } = {}) {
    const { dir, cleanup } = tempDir('autoclaim-signer-backend-');
    undo.push(cleanup);
    const socket = join(dir, 'signer.sock');
    const configFile = join(dir, 'signer.yaml');
    const wallet: TestWallet = { name: 'treasury', address, keyFile: '', secretKey64: new Uint8Array() };
    writeFileSync(configFile, signerYaml({ socket, wallets: [wallet], key: () => key }));
    const log = captureLog('silent');
    const loaded = loadSignerConfig(configFile, { env, cwd: dir, loadKeys: { redactor: log.redactor } });
    expect(loaded.errors).toEqual([]);
    const signers = loaded.signers!;
    undo.push(async () => {
      for (const s of signers.values()) await s.close?.();
    });
    expect(await connectSignerKeys(loaded.config!, signers)).toEqual([]);
    if (over.signer) signers.set('treasury', over.signer(signers.get('treasury')!));
    const sqlite = SqliteJournal.open(loaded.config!.statePath!);
    undo.push(() => sqlite.close());
    const journal = over.journal?.(sqlite) ?? sqlite;
    const handler = createSignerHandler({ config: loaded.config!, signers, journal, clock: systemClock, logger: log.logger, failpoint: () => {}, signDeadlineMs: 2_000 });
    const server = await listenSigner(socket, handler, log.logger);
    undo.push(() => server.close());
    const client = await RawClient.connect(socket);
    undo.push(() => client.close());
    return { client, journal: sqlite, handler, log, server };
  }

  /** A claim then a deposit of part of it, signed by the service and accepted by the sandbox. */
  async function claimAndDeposit(address: string, client: RawClient): Promise<void> {
    const sandbox = await startSandbox({ port: 0, wallets: [{ address, pendingLamports: 3n * SOL, accrualLamportsPerSec: 0n }] });
    undo.push(() => sandbox.close());
    const { epoch } = (await (await fetch(joinUrl(sandbox.url, `/rewards/wallet/${address}`))).json()) as { epoch: string };
    const ts = nowTs();
    const send = async (action: SignAction) => {
      const a = await client.ask({ id: action.op, key: 'treasury', ...action });
      expect(codeOf(a), JSON.stringify(a)).toBeUndefined();
      return sendToSandbox(sandbox.url, action, bs58.decode(a.signature as string));
    };
    expect(await send({ op: 'claim', wallet: address, ts, epoch })).toMatchObject({ status: 200, body: { status: 'success' } });
    expect(await send({ op: 'deposit', wallet: address, symbol: 'SOL2X', amount: '1.5', ts, epoch })).toMatchObject({ status: 200, body: { status: 'submitted' } });
    expect(sandbox.ledger().map((e) => [e.op, e.amountLamports])).toEqual([
      ['claim', 3n * SOL],
      ['deposit', (3n * SOL) / 2n],
    ]);
  }

  it('vault: a claim and a deposit signed by the transit key, verified by the sandbox, each journalled', async () => {
    const { secretKey64, address } = generateKeypair();
    const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
    undo.push(() => t.close());
    const { client, journal, log } = await service(address, `{ vault: { address: "${t.url}", key: treasury, token_env: VAULT_TOKEN } }`, { VAULT_TOKEN: TOKEN });
    await claimAndDeposit(address, client);
    expect(journal.all().map((r) => r.op)).toEqual(['claim', 'deposit']);
    expect(t.seen.filter((s) => s.url === '/v1/transit/sign/treasury')).toHaveLength(2);
    expect(log.text()).not.toContain(TOKEN);
  }, 30_000);

  it('aws_kms: a claim and a deposit signed by the KMS double, verified by the sandbox, each journalled', async () => {
    const { secretKey64, address } = generateKeypair();
    const kms = await kmsDouble({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
    undo.push(() => kms.close());
    // The SDK's default chain reads this process's environment (static test credentials).
    const saved = Object.fromEntries(Object.keys(KMS_TEST_ENV).map((k) => [k, process.env[k]]));
    Object.assign(process.env, KMS_TEST_ENV);
    undo.push(() => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    });
    const { client, journal } = await service(address, `{ aws_kms: { key_id: "${KMS_KEY_ID}", region: eu-west-1, endpoint: "${kms.url}" } }`, {});
    await claimAndDeposit(address, client);
    expect(journal.all().map((r) => r.op)).toEqual(['claim', 'deposit']);
    expect(kms.seen.filter((r) => r.target === 'TrentService.Sign')).toHaveLength(2);
  }, 30_000);

  it.skipIf(MODULE === undefined)('pkcs11: a claim and a deposit signed by CKM_EDDSA on a SoftHSM2 token, verified by the sandbox, each journalled', async () => {
    const { dir, cleanup } = tempDir('autoclaim-signer-hsm-');
    undo.push(cleanup);
    // Read by SoftHSM2 at C_Initialize, in this process and in the tools; put back after the test.
    const savedConf = process.env['SOFTHSM2_CONF'];
    undo.push(() => {
      if (savedConf === undefined) delete process.env['SOFTHSM2_CONF'];
      else process.env['SOFTHSM2_CONF'] = savedConf;
    });
    process.env['SOFTHSM2_CONF'] = softhsmConf(dir);
    const address = makeToken(process.env['SOFTHSM2_CONF'], 'signer-svc', '4321');
    const { client, journal } = await service(address, `{ pkcs11: { module: ${MODULE}, token: signer-svc, label: wk, pin_env: HSM_PIN, sessions: 2 } }`, { HSM_PIN: '4321' });
    await claimAndDeposit(address, client);
    expect(journal.all().map((r) => r.op)).toEqual(['claim', 'deposit']);
  }, 30_000);

  it.runIf(MODULE === undefined)(SKIP_REASON, () => {
    expect(MODULE).toBeUndefined();
  });

  it('vault down: SIGNER_UNAVAILABLE and nothing journalled; once it is back, the same epoch’s claim is signed', async () => {
    const { secretKey64, address } = generateKeypair();
    const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32) });
    undo.push(() => t.close());
    const { client, journal, handler } = await service(address, `{ vault: { address: "${t.url}", key: treasury, token_env: VAULT_TOKEN } }`, { VAULT_TOKEN: TOKEN });
    t.fail(503);
    const claim = { id: 'c1', key: 'treasury', op: 'claim', wallet: address, ts: nowTs(), epoch: today() };
    const deposit = { id: 'd1', key: 'treasury', op: 'deposit', wallet: address, symbol: 'SOL2X', amount: '10', ts: nowTs(), epoch: today() };
    const refused = await client.ask(claim);
    expect(codeOf(refused)).toBe('SIGNER_UNAVAILABLE');
    expect(refused.signature).toBeUndefined();
    expect(codeOf(await client.ask(deposit))).toBe('SIGNER_UNAVAILABLE');
    // Nothing was signed, so nothing counts: no claim for the epoch, no amount in the day's total.
    expect(journal.all()).toEqual([]);
    expect(handler.counts).toMatchObject({ signed: 0, refused: { SIGNER_UNAVAILABLE: 2 } });
    t.fail(undefined);
    // The daemon signs the step afresh (a new ts: another message): allowed, as nothing was spent.
    expect(codeOf(await client.ask({ ...claim, id: 'c2', ts: claim.ts + 1 }))).toBeUndefined();
    expect(codeOf(await client.ask({ ...deposit, id: 'd2', ts: deposit.ts + 1 }))).toBeUndefined();
    expect(codeOf(await client.ask({ ...deposit, id: 'd3', ts: deposit.ts + 2 }))).toBeUndefined();
    expect(codeOf(await client.ask({ ...deposit, id: 'd4', ts: deposit.ts + 3 }))).toBe('POLICY_DAY_CAP');
    expect(journal.all().map((r) => r.op)).toEqual(['claim', 'deposit', 'deposit']);
  }, 30_000);

  it('a backend that signs with another key: INTERNAL, its signature never leaves, nothing journalled', async () => {
    const mine = generateKeypair();
    const other = generateKeypair();
    // The public key Vault shows is the wallet's; the signatures are another key's.
    const t = await transit({ seed: other.secretKey64.slice(0, 32), publicKey: mine.secretKey64.slice(32) });
    undo.push(() => t.close());
    const { client, journal } = await service(mine.address, `{ vault: { address: "${t.url}", key: treasury, token_env: VAULT_TOKEN } }`, { VAULT_TOKEN: TOKEN });
    const a = await client.ask({ id: 'c1', key: 'treasury', op: 'claim', wallet: mine.address, ts: nowTs(), epoch: today() });
    expect(codeOf(a)).toBe('INTERNAL');
    expect(a.signature).toBeUndefined();
    expect(journal.all()).toEqual([]);
  }, 30_000);

  describe('with a backend that fails once', () => {
    const { secretKey64, address } = generateKeypair();
    /** The wallet's key behind the port, refusing its first request as an unreachable backend would. */
    const flaky = (): WalletSigner => {
      const real = inProcessSigner(signerFromSeed(secretKey64.slice(0, 32)));
      let calls = 0;
      return {
        address,
        backend: 'vault',
        sign: (action, signal) => (calls++ === 0 ? Promise.reject(new SignerRefused('SIGNER_UNAVAILABLE', 'Vault is sealed')) : real.sign(action, signal)),
      };
    };
    const keyFile = (dir: string): string => {
      const path = join(dir, 'treasury.json');
      writeFileSync(path, JSON.stringify([...secretKey64]), { mode: 0o600 });
      return path;
    };

    it('an identical request in the same batch as its failed original is refused too: no signature leaves without its record', async () => {
      const { dir, cleanup } = tempDir();
      undo.push(cleanup);
      const { handler, journal } = await service(address, `{ file: ${keyFile(dir)} }`, {}, { signer: flaky });
      const claim = JSON.stringify({ id: 'c1', key: 'treasury', op: 'claim', wallet: address, ts: nowTs(), epoch: today() });
      const answers = (await handler.answerAll([claim, claim.replace('"c1"', '"c1-again"')])).trim().split('\n');
      expect(answers.map((l) => codeOf(JSON.parse(l) as Record<string, unknown>))).toEqual(['SIGNER_UNAVAILABLE', 'SIGNER_UNAVAILABLE']);
      expect(journal.all()).toEqual([]);
      // Asked again, it is signed and journalled once.
      expect(codeOf(JSON.parse(await handler.answer(claim)) as Record<string, unknown>)).toBeUndefined();
      expect(journal.all()).toHaveLength(1);
    });

    // h27c: a stop (SIGTERM: `systemctl restart autoclaim-signer`, the documented way to change
    // signer.yaml) closed every client connection first and then waited for the batch in flight,
    // which committed its records and had nowhere to send their signatures. The claim counted for
    // its epoch, the daemon got no answer, and its fresh attempt (a new ts, another message) was
    // refused ALREADY_SIGNED_EPOCH by the restarted signer: the epoch's claim lost, and the deposit
    // after it. With a remote key or a PostgreSQL journal a batch lasts a round trip, so a restart
    // under load meets one. A stop now takes no new line, answers what it is signing, then closes.
    it('a stop while a batch is being signed answers it before closing: the committed claim reaches its client', async () => {
      const { dir, cleanup } = tempDir();
      undo.push(cleanup);
      let release: () => void = () => {};
      let asked: () => void = () => {};
      const inBackend = new Promise<void>((r) => (asked = r));
      const slow = (): WalletSigner => {
        const real = inProcessSigner(signerFromSeed(secretKey64.slice(0, 32)));
        return {
          address,
          backend: 'vault',
          sign: async (action, signal) => {
            asked();
            await new Promise<void>((r) => (release = r));
            return real.sign(action, signal);
          },
        };
      };
      const { client, journal, server } = await service(address, `{ file: ${keyFile(dir)} }`, {}, { signer: slow });
      const claim = { id: 'c1', key: 'treasury', op: 'claim', wallet: address, ts: nowTs(), epoch: today() };
      client.socket.write(`${JSON.stringify(claim)}\n`);
      await inBackend;
      const stopping = server.close();
      release();
      await stopping;
      const answer = await client.next();
      expect(journal.all().map((r) => r.op)).toEqual(['claim']);
      expect(answer, 'the claim was journalled, its signature never sent').toBeDefined();
      const a = JSON.parse(answer!) as Record<string, unknown>;
      expect(codeOf(a)).toBeUndefined();
      expect(verifySignature(new TextEncoder().encode(a.message as string), bs58.decode(a.signature as string), address)).toBe(true);
    });

    it('a commit whose answer is lost: SIGNER_UNAVAILABLE for the whole batch (nothing judged), no signature leaves, and what was committed still counts', async () => {
      const { dir, cleanup } = tempDir();
      undo.push(cleanup);
      const lost = (j: SqliteJournal): SignerJournal => ({
        batch: async (wallets, fn) => {
          await j.batch(wallets, fn);
          throw new Error('the answer to COMMIT was lost');
        },
        records: () => j.records(),
        close: () => j.close(),
      });
      const { handler, journal } = await service(address, `{ file: ${keyFile(dir)} }`, {}, { journal: lost });
      const claim = { id: 'c1', key: 'treasury', op: 'claim', wallet: address, ts: nowTs(), epoch: today() };
      const deposit = { id: 'd1', key: 'treasury', op: 'deposit', wallet: address, symbol: 'SOL2X', amount: '1', ts: nowTs(), epoch: today() };
      const out = (await handler.answerAll([JSON.stringify(claim), JSON.stringify(deposit)])).trim().split('\n');
      for (const l of out) {
        const a = JSON.parse(l) as Record<string, unknown>;
        expect(codeOf(a)).toBe('SIGNER_UNAVAILABLE');
        expect(a.signature).toBeUndefined();
      }
      // The commit did happen: both records stand and count against the caps, as after a crash.
      expect(journal.all().map((r) => r.op)).toEqual(['claim', 'deposit']);
      expect(handler.counts).toMatchObject({ signed: 0, refused: { SIGNER_UNAVAILABLE: 2 } });
    });
  });
});
