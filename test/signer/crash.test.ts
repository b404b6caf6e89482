// kill -9 of the signer between its journal commit and its answer (AUTOCLAIM_SIGNER_FAILPOINT):
// the signature was never sent, but it counts. A restarted signer never signs a second claim for
// the epoch nor lets the day cap be spent twice; the identical request only gets the same signature.
// On SQLite and on a PostgreSQL journal (state.url).
import { rmSync } from 'node:fs';
import bs58 from 'bs58';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/keys/verify.js';
import { PostgresJournal } from '../../src/signer/journal-postgres.js';
import { SqliteJournal } from '../../src/signer/journal.js';
import { buildOnce } from '../e2e/build.js';
import { spawnCli, type Child } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';
import { codeOf, RawClient, signerSetup, type SignerSetup } from './support.js';

const today = () => new Date().toISOString().slice(0, 10);
const nowTs = () => Math.floor(Date.now() / 1000);

function journalRows(path: string): Array<Record<string, unknown>> {
  const j = SqliteJournal.open(path);
  try {
    return j.all();
  } finally {
    j.close();
  }
}

describe('kill -9 of the signer between journal commit and answer', () => {
  let setup: SignerSetup;
  const children: Child[] = [];

  // buildOnce, not a build of its own: under `npm test` dist/ is built already, and rewriting it
  // here would change files under the CLI processes other test files are running.
  beforeAll(() => buildOnce(), 120_000);

  afterEach(async () => {
    for (const c of children.splice(0)) await c.stop('SIGTERM');
    setup.cleanup();
  });

  async function start(env: NodeJS.ProcessEnv = {}): Promise<Child> {
    const child = spawnCli(['signer', '--config', setup.configFile], { cwd: setup.dir, env });
    children.push(child);
    await child.waitFor((e) => e.event === 'signer.started');
    return child;
  }

  it('a SIGUSR1 or SIGUSR2 neither opens Node\'s inspector (code run inside it, from any local user) nor stops it', async () => {
    // Node opens an unauthenticated debugger on 127.0.0.1:9229 at SIGUSR1 unless the process
    // listens for it; SIGUSR2's default ends it. `autoclaim poll`/`pause` run as root signal the pid
    // in the daemon's control file, which a compromised daemon can set to the signer's.
    setup = signerSetup();
    const signer = await start();
    signer.proc.kill('SIGUSR1');
    signer.proc.kill('SIGUSR2');
    const c = await RawClient.connect(setup.socket);
    expect(await c.ask({ op: 'public_keys', id: 'k' })).toMatchObject({ id: 'k' });
    c.close();
    // Pending signals are taken lowest number first (USR1 10, USR2 12, TERM 15): a clean stop at
    // SIGTERM comes after both were heard.
    signer.proc.kill('SIGTERM');
    expect(await signer.exited).toEqual({ code: 0, signal: null });
    expect(signer.stderr()).not.toMatch(/Debugger listening/);
  }, 60_000);

  it('never yields a second claim signature for the epoch, and the identical request gets only the same one', async () => {
    setup = signerSetup();
    const w = setup.wallets[0]!;
    const first = { id: 'c1', key: 'treasury', op: 'claim', wallet: w.address, ts: nowTs(), epoch: today() };
    const doomed = await start({ AUTOCLAIM_SIGNER_FAILPOINT: 'after_journal_commit' });
    const c1 = await RawClient.connect(setup.socket);
    c1.socket.write(`${JSON.stringify(first)}\n`);
    expect(await c1.next()).toBeUndefined(); // no answer: the process died
    expect(await doomed.exited).toMatchObject({ signal: 'SIGKILL' });
    expect(journalRows(setup.journal)).toHaveLength(1);

    await start();
    const c2 = await RawClient.connect(setup.socket);
    // A retry as a new request (a new ts) is a second claim: refused.
    expect(codeOf(await c2.ask({ ...first, id: 'c2', ts: first.ts + 1 }))).toBe('ALREADY_SIGNED_EPOCH');
    // The identical request: the same message, hence the same (deterministic) signature.
    const again = await c2.ask(first);
    expect(codeOf(again)).toBeUndefined();
    expect(again.message).toBe(`${w.address}|${first.ts}`);
    expect(verifySignature(new TextEncoder().encode(again.message as string), bs58.decode(again.signature as string), w.address)).toBe(true);
    c2.close();
    expect(journalRows(setup.journal)).toHaveLength(1);
  }, 60_000);

  it('refuses to start on its journal deleted after a claim: exit 1, STATE_ROLLED_BACK, nothing listening', async () => {
    setup = signerSetup();
    const w = setup.wallets[0]!;
    const signer = await start();
    const c = await RawClient.connect(setup.socket);
    expect(codeOf(await c.ask({ id: 'c1', key: 'treasury', op: 'claim', wallet: w.address, ts: nowTs(), epoch: today() }))).toBeUndefined();
    c.close();
    await signer.stop('SIGTERM');
    for (const f of ['', '-wal', '-shm']) rmSync(setup.journal + f, { force: true });
    const again = spawnCli(['signer', '--config', setup.configFile], { cwd: setup.dir });
    children.push(again);
    expect((await again.exited).code).toBe(1);
    expect(again.stderr()).toMatch(/is older than what this signer signed from it: its newest signature is #0, and #1 was recorded/);
  }, 60_000);

  it('counts an unanswered deposit against the day cap', async () => {
    setup = signerSetup({ policy: { perAction: '20', perDay: '25' } });
    const w = setup.wallets[0]!;
    const deposit = (id: string, amount: string, ts: number) => ({ id, key: 'treasury', op: 'deposit', wallet: w.address, symbol: 'SOL2X', amount, ts });
    const doomed = await start({ AUTOCLAIM_SIGNER_FAILPOINT: 'after_journal_commit' });
    const c1 = await RawClient.connect(setup.socket);
    c1.socket.write(`${JSON.stringify(deposit('d1', '20', nowTs()))}\n`);
    expect(await c1.next()).toBeUndefined();
    expect(await doomed.exited).toMatchObject({ signal: 'SIGKILL' });

    await start();
    const c2 = await RawClient.connect(setup.socket);
    expect(codeOf(await c2.ask(deposit('d2', '10', nowTs() + 1)))).toBe('POLICY_DAY_CAP');
    expect(codeOf(await c2.ask(deposit('d3', '5', nowTs() + 2)))).toBeUndefined();
    c2.close();
    expect(journalRows(setup.journal).map((r) => r.amount_lamports)).toEqual([20_000_000_000n, 5_000_000_000n]);
  }, 60_000);

  it('on a PostgreSQL journal (state.url) too: the committed claim counts after a restart', async () => {
    const url = await createDatabase();
    setup = signerSetup({ state: `url: ${url}` });
    const w = setup.wallets[0]!;
    const first = { id: 'c1', key: 'treasury', op: 'claim', wallet: w.address, ts: nowTs(), epoch: today() };
    const doomed = await start({ AUTOCLAIM_SIGNER_FAILPOINT: 'after_journal_commit' });
    const c1 = await RawClient.connect(setup.socket);
    c1.socket.write(`${JSON.stringify(first)}\n`);
    expect(await c1.next()).toBeUndefined();
    expect(await doomed.exited).toMatchObject({ signal: 'SIGKILL' });

    await start();
    const c2 = await RawClient.connect(setup.socket);
    expect(codeOf(await c2.ask({ ...first, id: 'c2', ts: first.ts + 1 }))).toBe('ALREADY_SIGNED_EPOCH');
    const again = await c2.ask(first);
    expect(codeOf(again)).toBeUndefined();
    c2.close();
    const journal = await PostgresJournal.open(url, {});
    try {
      expect((await journal.records()).map((r) => r.op)).toEqual(['claim']);
    } finally {
      await journal.close();
    }
  }, 60_000);
});
