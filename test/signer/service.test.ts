// The signer service in this process, spoken to over its real unix socket by a client that writes
// the protocol itself — as the daemon would, and as a compromised daemon would (SPEC §7).
import { statSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain.js';
import { verifySignature } from '../../src/keys/verify.js';
import { loadSignerConfig } from '../../src/signer/config.js';
import { SqliteJournal } from '../../src/signer/journal.js';
import { createSignerHandler, type SignerHandler } from '../../src/signer/service.js';
import { listenSigner, type SignerServer } from '../../src/signer/server.js';
import { captureLog, type CapturedLog } from '../support/log.js';
import { codeOf, RawClient, signerSetup, type SignerSetup } from './support.js';

const today = () => new Date().toISOString().slice(0, 10);
const nowTs = () => Math.floor(Date.now() / 1000);

/** The service for `setup` on its socket, its journal, and a raw client connected to it. */
async function startService(setup: SignerSetup, log: CapturedLog) {
  const loaded = loadSignerConfig(setup.configFile, { env: {}, cwd: setup.dir, loadKeys: { redactor: log.redactor } });
  expect(loaded.errors).toEqual([]);
  const journal = SqliteJournal.open(loaded.config!.statePath!);
  const handler = createSignerHandler({ config: loaded.config!, signers: loaded.signers!, journal, clock: systemClock, logger: log.logger, failpoint: () => {} });
  const server = await listenSigner(setup.socket, handler, log.logger);
  const client = await RawClient.connect(setup.socket);
  return { journal, handler, server, client };
}

async function stopService(s: { journal: SqliteJournal; server: SignerServer; client: RawClient }, setup: SignerSetup): Promise<void> {
  s.client.close();
  await s.server.close();
  s.journal.close();
  setup.cleanup();
}

describe('the signer service over its socket', () => {
  let setup: SignerSetup;
  let journal: SqliteJournal;
  let server: SignerServer;
  let handler: SignerHandler;
  let client: RawClient;
  let log: CapturedLog;

  beforeEach(async () => {
    setup = signerSetup({ names: ['treasury', 'ops'] });
    log = captureLog('debug');
    ({ journal, handler, server, client } = await startService(setup, log));
  });

  afterEach(async () => {
    await stopService({ journal, server, client }, setup);
  });

  const treasury = () => setup.wallets[0]!;
  const claim = (over: Record<string, unknown> = {}) => ({ id: 'c1', key: 'treasury', op: 'claim', wallet: treasury().address, ts: nowTs(), epoch: today(), ...over });
  const deposit = (amount: string, over: Record<string, unknown> = {}) => ({ id: `d-${amount}`, key: 'treasury', op: 'deposit', wallet: treasury().address, symbol: 'SOL2X', amount, ts: nowTs(), epoch: today(), ...over });

  it('creates its socket with mode 0660', () => {
    expect(statSync(setup.socket).mode & 0o777).toBe(0o660);
  });

  it('lists its keys for public_keys', async () => {
    const a = await client.ask({ op: 'public_keys' });
    expect(a).toEqual({ id: null, keys: setup.wallets.map((w) => ({ key: w.name, address: w.address })) });
    expect(await client.ask({ op: 'public_keys', id: 'k' })).toMatchObject({ id: 'k' });
  });

  it('signs a claim and a deposit: the message is its own template, the signature verifies, each is journalled', async () => {
    const ts = nowTs();
    const c = await client.ask(claim({ ts }));
    expect(c).toMatchObject({ id: 'c1', message: `${treasury().address}|${ts}` });
    expect(verifySignature(new TextEncoder().encode(c.message as string), bs58.decode(c.signature as string), treasury().address)).toBe(true);
    const d = await client.ask(deposit('0.5', { ts, plan: '7', step: '2' }));
    expect(d).toMatchObject({ id: 'd-0.5', message: `${treasury().address}|SOL2X|0.5|${ts}` });
    expect(verifySignature(new TextEncoder().encode(d.message as string), bs58.decode(d.signature as string), treasury().address)).toBe(true);
    const rows = journal.all();
    expect(rows.map((r) => [r.op, r.amount_lamports, r.epoch, r.plan, r.step])).toEqual([
      ['claim', null, today(), null, null],
      ['deposit', 500_000_000n, today(), '7', '2'],
    ]);
    expect(rows[1]!.message_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(handler.counts.signed).toBe(2);
  });

  it('answers the identical request again with the identical signature, journalled once', async () => {
    const req = deposit('1');
    const a = await client.ask(req);
    const b = await client.ask(req);
    expect(b.signature).toBe(a.signature);
    expect(journal.all()).toHaveLength(1);
  });

  it("signs a deposit of a plan days old: an epoch its message does not sign is only the journal's note (helper h29e)", async () => {
    // A plan's deposit (or mint, withdraw, burn) held by an unknown step until an operator resolved
    // it after a weekend: the daemon names the plan's epoch, three days past. Refused as
    // EPOCH_INVALID, the step was recorded rejected and never went out, where an in-process key sent it.
    const old = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
    const d = await client.ask(deposit('1', { epoch: old }));
    expect(codeOf(d), JSON.stringify(d)).toBeUndefined();
    expect(journal.all().map((r) => [r.op, r.epoch])).toEqual([['deposit', old]]);
    // A claim's epoch keys its one claim per epoch: judged as ever.
    expect(codeOf(await client.ask(claim({ epoch: old })))).toBe('EPOCH_INVALID');
  });

  it('journals pipelined requests in one commit, each checked against those before it', async () => {
    const t = nowTs();
    const lines = [claim({ id: 'p1', ts: t }), claim({ id: 'p2', ts: t + 1 }), deposit('10', { id: 'p3', ts: t }), deposit('10', { id: 'p4', ts: t - 1 }), deposit('10', { id: 'p5', ts: t - 2 })];
    client.socket.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const answers = [];
    for (let i = 0; i < lines.length; i++) answers.push(JSON.parse((await client.next())!) as Record<string, unknown>);
    expect(answers.map((a) => [a.id, codeOf(a)])).toEqual([
      ['p1', undefined],
      ['p2', 'ALREADY_SIGNED_EPOCH'],
      ['p3', undefined],
      ['p4', undefined],
      ['p5', 'POLICY_DAY_CAP'],
    ]);
    expect(journal.all().map((r) => r.op)).toEqual(['claim', 'deposit', 'deposit']);
  });

  it('answers the other lines of a batch when one holds an amount beyond u64 lamports', async () => {
    // Canonical text, but no amount: parsing it threw, and the whole batch went unanswered.
    const t = nowTs();
    client.socket.write(`${JSON.stringify(deposit('1', { id: 'ok', ts: t }))}\n${JSON.stringify(deposit('100000000000', { id: 'huge', ts: t }))}\n`);
    const answers = [await client.next(), await client.next()].map((l) => JSON.parse(l ?? '{}') as Record<string, unknown>);
    expect(answers.map((a) => [a.id, codeOf(a)])).toEqual([
      ['ok', undefined],
      ['huge', 'BAD_REQUEST'],
    ]);
    expect(journal.all()).toHaveLength(1);
  });

  it('journals what several clients sent at once in one commit, answering each its own', async () => {
    const batches: string[][] = [];
    const batched = await listenSigner(
      join(setup.dir, 'batched.sock'),
      {
        answerAll: (lines) => {
          batches.push(lines.map((l) => (JSON.parse(l) as { id: string }).id));
          return handler.answerAll(lines);
        },
      },
      log.logger,
    );
    const clients: RawClient[] = [];
    try {
      for (let i = 0; i < 3; i++) clients.push(await RawClient.connect(batched.path));
      // Each accepted by the server (it answers), before the three write at once.
      for (const [i, c] of clients.entries()) expect(await c.ask({ op: 'public_keys', id: `k${i}` })).toHaveProperty('keys');
      batches.length = 0;
      const [a, b, c] = clients as [RawClient, RawClient, RawClient];
      a.socket.write(`${JSON.stringify(claim({ id: 'a1', key: 'ops', wallet: setup.wallets[1]!.address }))}\n`);
      b.socket.write(`${JSON.stringify(claim({ id: 'b1' }))}\n${JSON.stringify(deposit('1', { id: 'b2' }))}\n`);
      c.socket.write(`${JSON.stringify(claim({ id: 'c1', ts: nowTs() + 1 }))}\n`);
      const answers = async (client: RawClient, n: number) => {
        const out: Array<[unknown, string | undefined]> = [];
        for (let i = 0; i < n; i++) {
          const x = JSON.parse((await client.next())!) as Record<string, unknown>;
          out.push([x.id, codeOf(x)]);
        }
        return out;
      };
      expect(await answers(a, 1)).toEqual([['a1', undefined]]);
      expect(await answers(b, 2)).toEqual([
        ['b1', undefined],
        ['b2', undefined],
      ]);
      // After b's claim of the epoch, in the same batch: refused.
      expect(await answers(c, 1)).toEqual([['c1', 'ALREADY_SIGNED_EPOCH']]);
      expect(batches).toEqual([['a1', 'b1', 'b2', 'c1']]);
      expect(journal.all().map((r) => r.op)).toEqual(['claim', 'claim', 'deposit']);
    } finally {
      for (const c of clients) c.close();
      await batched.close();
    }
  });

  it('answers a client that closes its side right after asking (echo … | socat)', async () => {
    client.socket.end(`${JSON.stringify({ op: 'public_keys', id: 'k' })}\n${JSON.stringify(deposit('1'))}\n`);
    const answers = [await client.next(), await client.next()].map((l) => JSON.parse(l!) as Record<string, unknown>);
    expect(answers.map((a) => [a.id, codeOf(a)])).toEqual([
      ['k', undefined],
      ['d-1', undefined],
    ]);
    expect(await client.next()).toBeUndefined();
  });

  describe('a hostile client is refused, and the journal does not change', () => {
    const cases: Array<[string, () => unknown, string]> = [
      ['a second claim in one epoch', () => claim({ id: 'c2', ts: nowTs() + 1 }), 'ALREADY_SIGNED_EPOCH'],
      ['a deposit over the day cap', () => deposit('6', { ts: nowTs() + 2 }), 'POLICY_DAY_CAP'],
      ['a deposit over the cap per action', () => deposit('10.000000001'), 'POLICY_ACTION_CAP'],
      ['a symbol not allowed', () => deposit('1', { symbol: 'SOL5X' }), 'POLICY_SYMBOL'],
      ['an op not allowed', () => deposit('1', { op: 'mint' }), 'POLICY_OP'],
      ['a timestamp an hour behind', () => deposit('1', { ts: nowTs() - 3600 }), 'TS_SKEW'],
      ['a timestamp an hour ahead', () => claim({ epoch: today(), ts: nowTs() + 3600 }), 'TS_SKEW'],
      ['an unknown key', () => deposit('1', { key: 'nobody' }), 'UNKNOWN_KEY'],
      ['another key’s wallet', () => deposit('1', { key: 'ops' }), 'UNKNOWN_KEY'],
      ['an epoch days away', () => claim({ epoch: '2001-01-01' }), 'EPOCH_INVALID'],
      ['bare bytes as a message', () => ({ id: 'b1', key: 'treasury', message: 'anything|at|all' }), 'BAD_REQUEST'],
      ['bare bytes beside an action', () => ({ ...deposit('1'), bytes: [1, 2, 3] }), 'BAD_REQUEST'],
      ['plain text', () => 'sign this please', 'BAD_REQUEST'],
      ['a JSON array', () => '[1,2,3]', 'BAD_REQUEST'],
      ['an amount that is not canonical', () => deposit('0.50'), 'BAD_REQUEST'],
      ['an amount as a number', () => deposit('1', { amount: 1 }), 'BAD_REQUEST'],
      // Canonical text, but more lamports than u64 holds: once an exception that failed the whole batch.
      ['an amount beyond u64 lamports', () => deposit('100000000000'), 'BAD_REQUEST'],
      ['a claim with an amount', () => claim({ amount: '1' }), 'BAD_REQUEST'],
      ['a claim without an epoch', () => claim({ epoch: undefined }), 'BAD_REQUEST'],
      ['a float ts', () => claim({ ts: nowTs() + 0.5 }), 'BAD_REQUEST'],
      ['no id', () => claim({ id: undefined }), 'BAD_REQUEST'],
    ];
    it.each(cases)('%s', async (_what, request, code) => {
      // What the policy allows already happened: one claim this epoch, 20 of the 25 SOL a day.
      expect(codeOf(await client.ask(claim()))).toBeUndefined();
      // One clock reading for both: read twice across a second's edge, the two would be one message.
      const t = nowTs();
      expect(codeOf(await client.ask(deposit('10', { ts: t - 1 })))).toBeUndefined();
      expect(codeOf(await client.ask(deposit('10', { ts: t - 2 })))).toBeUndefined();
      const before = journal.all();
      const answer = await client.ask(request());
      expect(codeOf(answer), JSON.stringify(answer)).toBe(code);
      expect(answer.signature).toBeUndefined();
      expect(journal.all()).toEqual(before);
      expect(log.events('signer.refused').at(-1)).toMatchObject({ code });
      // The connection stays usable after a refusal.
      expect(await client.ask({ op: 'public_keys' })).toHaveProperty('keys');
    });

    it('hangs up on a line over the size limit, refusing it', async () => {
      client.socket.write('x'.repeat(10_000));
      const line = await client.next();
      expect(JSON.parse(line!)).toMatchObject({ error: { code: 'BAD_REQUEST' } });
      expect(await client.next()).toBeUndefined();
      expect(journal.all()).toEqual([]);
    });
  });

  it('never logs key material', async () => {
    await client.ask(claim());
    const text = log.text();
    for (const w of setup.wallets) {
      expect(text).not.toContain(bs58.encode(w.secretKey64));
      expect(text).not.toContain(JSON.stringify([...w.secretKey64.subarray(0, 32)]).slice(1, -1));
    }
  });
});

describe('the signer service with a deposit template that signs {epoch} (helper h29e)', () => {
  it("judges that epoch: it is in the signed bytes", async () => {
    const setup = signerSetup({ extra: 'templates:\n  deposit: "{wallet}|{symbol}|{amount}|{epoch}|{ts}"\n' });
    const log = captureLog('debug');
    const s = await startService(setup, log);
    try {
      const old = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
      const ask = (epoch: string) => s.client.ask({ id: `d-${epoch}`, key: 'treasury', op: 'deposit', wallet: setup.wallets[0]!.address, symbol: 'SOL2X', amount: '1', ts: nowTs(), epoch });
      expect(codeOf(await ask(old))).toBe('EPOCH_INVALID');
      expect(codeOf(await ask(today()))).toBeUndefined();
    } finally {
      await stopService(s, setup);
    }
  });
});

describe("the signer service's refusal of a burn over its caps (helper h29e)", () => {
  it('names the tokens, not SOL: the daemon logs it as the reason the step was refused', async () => {
    const setup = signerSetup({ policy: { ops: '[burn]', symbols: '[SOL5X]', perAction: '10', perDay: '15' } });
    const log = captureLog('debug');
    const s = await startService(setup, log);
    try {
      const burn = (amount: string, ts: number) => s.client.ask({ id: `b-${amount}`, key: 'treasury', op: 'burn', wallet: setup.wallets[0]!.address, symbol: 'SOL5X', amount, ts });
      const messageOf = (a: Record<string, unknown>) => (a.error as { message?: string } | undefined)?.message;
      expect(messageOf(await burn('11', nowTs()))).toBe("11 SOL5X tokens is over this key's cap per action");
      expect(codeOf(await burn('10', nowTs() - 1))).toBeUndefined();
      expect(messageOf(await burn('6', nowTs() - 2))).toBe('6 SOL5X tokens would take this wallet over its cap per day');
    } finally {
      await stopService(s, setup);
    }
  });
});

describe('the signer service at the largest caps its journal can count (helper 38)', () => {
  const MAX = '9223372036.854775807';
  let setup: SignerSetup;
  let journal: SqliteJournal;
  let server: SignerServer;
  let client: RawClient;

  beforeEach(async () => {
    setup = signerSetup({ policy: { perAction: MAX, perDay: MAX } });
    ({ journal, server, client } = await startService(setup, captureLog('debug')));
  });

  afterEach(async () => {
    await stopService({ journal, server, client }, setup);
  });

  const deposit = (amount: string, ts: number) => ({ id: `d-${amount}`, key: 'treasury', op: 'deposit', wallet: setup.wallets[0]!.address, symbol: 'SOL2X', amount, ts, epoch: today() });

  it('an amount one lamport above what the journal can record is a named refusal before the journal (POLICY_ACTION_CAP), not INTERNAL; the largest is journalled exactly', async () => {
    expect(codeOf(await client.ask(deposit('9223372036.854775808', nowTs())))).toBe('POLICY_ACTION_CAP');
    expect(codeOf(await client.ask(deposit('18446744073.709551615', nowTs())))).toBe('POLICY_ACTION_CAP');
    expect(journal.all()).toEqual([]);
    const ok = await client.ask(deposit(MAX, nowTs()));
    expect(codeOf(ok)).toBeUndefined();
    expect(journal.all().map((r) => r.amount_lamports)).toEqual([2n ** 63n - 1n]);
    // The day is full: one lamport more is the day cap's, still named, still before any INTERNAL.
    expect(codeOf(await client.ask(deposit('0.000000001', nowTs() + 1)))).toBe('POLICY_DAY_CAP');
  });
});
