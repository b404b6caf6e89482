// `signer prune --older-than DURATION [--dry-run]`: deletes the signer journal's signatures made
// before the cutoff (SqliteJournal.prune), beside running signers: the journal is made for several
// signer processes on one file, each batch of theirs an IMMEDIATE transaction, and a prune's
// batches are the same. What no check of the journal reads is what goes:
// - the day cap reads a wallet's last 24 hours;
// - one claim per epoch reads the claims of the epoch asked, and with `epochs: calendar` an epoch is
//   signed only within a day of the signer's date, so a claim signed more than three days ago names
//   an epoch no claim can be signed for again (`epochs: any`, the sandbox's, is refused here);
// - a repeat (the same message) is asked only of a ts within max_ts_skew (at most 10 minutes);
// - the mark compares with the newest signature, which the journal keeps.
// Those reaches are the signer's clock's when it signed, so the cutoff is also held to 3 days before
// the newest signature: a clock ahead where the prune runs (days, say) would otherwise put today's
// signatures before the cutoff, and the day cap and the epoch's claim would be signed afresh.
// A PostgreSQL journal (state.url, a cluster's signers) is not pruned here.
import { existsSync } from 'node:fs';
import { formatIssue } from '../../errors.js';
import { parseDuration } from '../../config/durations.js';
import { DAY_MS } from '../../rules/limits.js';
import { UsageError, type CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { signerConfigPath } from './signer.js';

/** The shortest --older-than: the day cap's window and an epoch's day either side, with a day to spare. */
export const SIGNER_PRUNE_MIN_MS = 3 * DAY_MS;

export interface SignerPruneOptions {
  olderThan: string;
  dryRun?: boolean;
}

export async function signerPruneCommand(ctx: CommandContext, configFlag: string | undefined, opts: SignerPruneOptions): Promise<ExitCode> {
  const { io } = ctx;
  const olderThanMs = parseDuration(opts.olderThan);
  if (olderThanMs === undefined) throw new UsageError(`--older-than ${opts.olderThan} is not a duration (e.g. 90d, at most 366d)`);
  if (olderThanMs < SIGNER_PRUNE_MIN_MS) {
    throw new UsageError(`--older-than ${opts.olderThan} is inside what the journal's checks read (the day cap's day, an epoch's claim signable a day either side of its date); give at least 3d`);
  }
  const file = signerConfigPath(configFlag, io.env);
  const { loadSignerConfig } = await import('../../signer/config.js');
  const loaded = loadSignerConfig(file, { env: io.env, cwd: io.cwd });
  if (loaded.config === undefined) {
    for (const e of loaded.errors) writeLine(io.stderr, formatIssue(e));
    writeLine(io.stderr, `${file}: ${loaded.errors.length} error(s); the signer config is invalid`);
    return EXIT.CONFIG;
  }
  const config = loaded.config;
  if (config.stateUrl !== undefined) throw new UsageError('signer prune works on a SQLite journal (state.path); this signer.yaml names a PostgreSQL journal (state.url): nothing was deleted');
  if (config.epochs === 'any') throw new UsageError('epochs: any lets a claim be signed for any date, so every claim signed is what refuses its epoch again: not pruned');
  const path = config.statePath ?? '';
  const out = (line: string) => writeLine(io.stdout, line);
  if (!existsSync(path)) {
    out(`no signer journal at ${path}: nothing to prune`);
    return EXIT.OK;
  }
  const { SqliteJournal } = await import('../../signer/journal.js');
  const journal = SqliteJournal.open(path);
  try {
    const newest = journal.newestSignedAtMs();
    const byClock = io.clock.now() - olderThanMs;
    const cutoffMs = newest === undefined ? byClock : Math.min(byClock, newest - SIGNER_PRUNE_MIN_MS);
    const c = journal.prune(cutoffMs, opts.dryRun === true);
    out(`${opts.dryRun === true ? 'would delete' : 'deleted'} ${c.signatures} signatures and ${c.buckets} hourly day-cap totals, signed before ${new Date(cutoffMs).toISOString()}; the newest signature is always kept`);
    if (cutoffMs < byClock) out(`the cutoff is held at 3 days before the newest signature (${new Date(newest ?? 0).toISOString()}), earlier than --older-than ${opts.olderThan} by this host's clock: the checks read from the signer's clock when it signed, and this one may be ahead of it`);
    return EXIT.OK;
  } finally {
    journal.close();
  }
}
