// `autoclaim signer prune --older-than D [--dry-run]` on a real SQLite journal: old signatures and
// their hourly day-cap totals go, with counts; the newest signature stays (the mark file compares
// with it at the next open); what the checks read still refuses; it runs beside an open journal;
// and it refuses a cutoff inside the checks' reach, `epochs: any` and a PostgreSQL journal (2).
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteJournal, type JournalRecord } from '../../src/signer/journal.js';
import { runCli } from '../e2e/helpers.js';
import { signerSetup, signerYaml, type SignerSetup } from './support.js';

const SOL = 1_000_000_000n;
const CAP = 10n * SOL;
const DAY = 86_400_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 10, 12);
const at = (d: number) => T0 + d * DAY;
const epoch = (d: number) => new Date(at(d)).toISOString().slice(0, 10);
const A = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';

let n = 0;
function rec(over: Partial<JournalRecord> = {}): JournalRecord {
  n++;
  return { key: 'treasury', wallet: A, op: 'deposit', symbol: 'SOL2X', amountLamports: SOL, ts: 1_768_000_000 + n, epoch: undefined, messageSha256: `${n}`.padStart(64, '0'), signedAtMs: at(0), plan: undefined, step: undefined, ...over };
}
const claim = (d: number): JournalRecord => rec({ op: 'claim', symbol: undefined, amountLamports: undefined, epoch: epoch(d), signedAtMs: at(d) });
const one = (j: SqliteJournal, r: JournalRecord) => j.batch([r.wallet], (tx) => tx.record(r, CAP));

let setup: SignerSetup | undefined;
const open: SqliteJournal[] = [];
afterEach(() => {
  for (const j of open.splice(0)) j.close();
  setup?.cleanup();
  setup = undefined;
});

function journal(): SqliteJournal {
  const j = SqliteJournal.open(setup!.journal);
  open.push(j);
  return j;
}

/** Ten days of a claim and a 1 SOL deposit a day. */
async function tenDays(): Promise<SqliteJournal> {
  setup = signerSetup();
  const j = journal();
  for (let d = 0; d < 10; d++) {
    expect(await one(j, claim(d))).toBe('recorded');
    expect(await one(j, rec({ signedAtMs: at(d) }))).toBe('recorded');
  }
  return j;
}

describe('signer journal prune', () => {
  it('deletes the signatures and day totals before the cutoff; the checks still refuse what they refused', async () => {
    const j = await tenDays();
    expect(j.prune(at(7), false, 3)).toEqual({ signatures: 14, buckets: 7 });
    expect((await j.records()).map((r) => r.signedAtMs)).toEqual([7, 7, 8, 8, 9, 9].map(at));
    // The epoch's claim and the day cap read what is left.
    expect(await one(j, claim(9))).toBe('already_signed_epoch');
    expect(await one(j, rec({ amountLamports: CAP, signedAtMs: at(9) + HOUR }))).toBe('day_cap');
    expect(await one(j, rec({ amountLamports: CAP - SOL, signedAtMs: at(9) + HOUR }))).toBe('recorded');
  });

  it('keeps the newest signature, so the journal opens again against its mark', async () => {
    const j = await tenDays();
    expect(j.prune(at(30), false).signatures).toBe(19);
    j.close();
    open.splice(0);
    const again = journal();
    expect((await again.records()).map((r) => r.signedAtMs)).toEqual([at(9)]);
  });

  it('--dry-run counts the same and deletes nothing', async () => {
    const j = await tenDays();
    expect(j.prune(at(7), true, 3)).toEqual({ signatures: 14, buckets: 7 });
    expect(await j.records()).toHaveLength(20);
  });

  it('runs from the CLI beside a running signer, which goes on signing; refuses what it must not prune', async () => {
    const j = await tenDays();
    const cli = (args: string[]) => runCli(['signer', 'prune', ...args, '--config', setup!.configFile], { cwd: setup!.dir, clock: { now: () => at(11), monotonic: () => 0 } });

    const dry = await cli(['--older-than', '5d', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`would delete 12 signatures and 6 hourly day-cap totals, signed before ${new Date(at(6)).toISOString()}`);
    expect(dry.stdout).not.toContain('the cutoff is held');
    const r = await cli(['--older-than', '5d']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('deleted 12 signatures and 6 hourly day-cap totals');
    // The journal open all along (a running signer's) records on, and its mark holds at the next open.
    expect(await one(j, claim(11))).toBe('recorded');
    j.close();
    open.splice(0);
    expect(await journal().records()).toHaveLength(9);

    const inside = await cli(['--older-than', '2d']);
    expect(inside.code).toBe(2);
    expect(inside.stderr).toContain('give at least 3d');
    writeFileSync(setup!.configFile, signerYaml({ socket: setup!.socket, wallets: setup!.wallets, extra: 'epochs: any\n' }));
    expect((await cli(['--older-than', '90d'])).stderr).toContain('epochs: any lets a claim be signed for any date');
    writeFileSync(setup!.configFile, signerYaml({ socket: setup!.socket, wallets: setup!.wallets, state: 'url: postgres://autoclaim@127.0.0.1:9/journal' }));
    const shared = await cli(['--older-than', '90d']);
    expect(shared.code).toBe(2);
    expect(shared.stderr).toContain('signer prune works on a SQLite journal (state.path)');
  });

  it('holds the cutoff at 3 days before the newest signature when this host\'s clock is days ahead of it', async () => {
    const j = await tenDays();
    // Signed up to day 9; the prune's clock says day 20, so --older-than 3d alone would cut at day 17: everything.
    const r = await runCli(['signer', 'prune', '--older-than', '3d', '--config', setup!.configFile], { cwd: setup!.dir, clock: { now: () => at(20), monotonic: () => 0 } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`deleted 12 signatures and 6 hourly day-cap totals, signed before ${new Date(at(6)).toISOString()}`);
    expect(r.stdout).toContain('the cutoff is held at 3 days before the newest signature');
    // What the checks read on the signer's clock is all there.
    expect(await one(j, claim(9))).toBe('already_signed_epoch');
    expect(await one(j, rec({ amountLamports: CAP, signedAtMs: at(9) + HOUR }))).toBe('day_cap');
  });
});
