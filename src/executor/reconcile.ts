// Deciding whether a claim whose answer was lost was applied (SPEC §2): read the summary again and
// compare it with the one recorded just before the claim was signed. Pure, so it is table-tested.
import type { Lamports, WalletSummary } from '../domain.js';

/**
 * `applied`: lifetime rose by about what pending dropped, in the same epoch — evidence only a claim
 * leaves. `not_applied`: lifetime known on both sides and unchanged, pending not dropped: a new
 * claim may be signed (once the first can no longer land: executor.ts). `undetermined`: the
 * summary cannot tell. `moved` says whether it moved anyway (pending dropped, lifetime changed
 * without the pending drop to match, or an epoch rollover with either): evidence that something
 * happened that is not the proof of a claim. Such a claim is held for an operator and nothing
 * sized from it runs; an undetermined claim that nothing moved is looked at again later.
 */
export interface ClaimVerdict {
  outcome: 'applied' | 'not_applied' | 'undetermined';
  applied: boolean;
  /** Only for `undetermined`: the summary moved, but not as only a claim moves it. */
  moved: boolean;
  /** A lower bound of what was claimed, when applied: deposits of "N%" are computed from it. */
  claimedLamports: Lamports | undefined;
  note: string;
}

type Before = { pendingLamports: string; lifetimeLamports: string | null; epoch?: string };
type After = Pick<WalletSummary, 'pendingLamports' | 'lifetimeLamports'> & { epoch?: string };

/**
 * "About" (the tolerance). An honest service keeps this true of a claim applied between the two
 * reads: the claim took what was pending at the first read plus a1, accrued before the server
 * applied it, and pending is now a2, accrued since. So `rise − drop = a1 + a2`, the accrual between
 * the reads: never below 0, and with no bound the summaries could show (a server that holds a claim
 * a while, a look long after). Hence:
 *   - the rise must cover the drop, less `slack` for rounding: `rise >= drop − slack`, where slack is
 *     accrualSlack(pending_before) (1 %, at least 0.001 SOL: below);
 *   - a rise above the drop is accrual and is accepted; what the claim counts as, and what any step
 *     sized from it uses, is `min(rise, pending_before)` all the same (SPEC §2), so a lifetime that
 *     rose by more cannot size more.
 * A lifetime that did not rise, or rose by less than pending dropped, is not a claim's; a pending
 * drop with no lifetime to match it is not evidence at all: a server that lies, resets, or rolls
 * over an epoch drops pending too.
 */
export function claimLooksApplied(before: Before, after: After): ClaimVerdict {
  const pendingBefore = BigInt(before.pendingLamports);
  const pendingAfter = after.pendingLamports;
  const lifetimeBefore = before.lifetimeLamports === null ? null : BigInt(before.lifetimeLamports);
  const lifetimeAfter = after.lifetimeLamports;
  const drop = pendingBefore - pendingAfter;
  const rise = lifetimeBefore !== null && lifetimeAfter !== null ? lifetimeAfter - lifetimeBefore : null;
  const slack = accrualSlack(pendingBefore);
  const rolledOver = before.epoch !== undefined && after.epoch !== undefined && before.epoch !== after.epoch;
  const seen = `pending ${pendingBefore} → ${pendingAfter}, lifetime ${lifetimeBefore ?? 'missing'} → ${lifetimeAfter ?? 'missing'} lamports`;
  const undetermined = (moved: boolean, why: string): ClaimVerdict => ({ outcome: 'undetermined', applied: false, moved, claimedLamports: undefined, note: `${why} (${seen})` });

  const moved = drop > 0n || (rise !== null && rise !== 0n);
  if (rolledOver && moved) {
    return undetermined(true, `the epoch rolled over (${before.epoch} → ${after.epoch}) between the two summaries: what moved may be the rollover's, not the claim's`);
  }
  if (rise !== null && rise > 0n && drop > 0n && rise + slack >= drop) {
    return {
      outcome: 'applied',
      applied: true,
      moved: true,
      // Never more than was seen pending before the claim was signed.
      claimedLamports: rise < pendingBefore ? rise : pendingBefore,
      note: `lifetime rose by ${rise} lamports as pending dropped by ${drop} (${seen})`,
    };
  }
  if (rise !== null && rise !== 0n) {
    return undetermined(true, rise < 0n ? 'lifetime went down' : drop > 0n ? `lifetime rose by ${rise} lamports, less than the ${drop} pending dropped` : `lifetime rose by ${rise} lamports but pending did not drop`);
  }
  if (drop > 0n) {
    return undetermined(true, rise === null ? 'pending dropped but lifetime_sol is missing: a drop alone is no proof of a claim' : 'pending dropped but lifetime did not rise: a drop alone is no proof of a claim');
  }
  if (rise === null) {
    return undetermined(false, `pending did not drop and lifetime_sol is missing ${lifetimeBefore === null ? 'from the summary the claim was signed against' : 'now'}: the summary cannot tell whether the claim was applied`);
  }
  return { outcome: 'not_applied', applied: false, moved: false, claimedLamports: undefined, note: `pending did not drop and lifetime did not rise (${seen})` };
}

/**
 * What an applied claim whose answer did not say what it took is proved to have brought, for the
 * steps sized from it ("N%", "all"): the rise of lifetime between the summary the claim was signed
 * against and one read after its answer, never more than the pending seen before it — the bound
 * reconciliation gives an applied claim (above). Undefined when nothing proves an amount: lifetime
 * missing on either side or not risen, or the epoch rolled over between the two (a rise may then
 * be the rollover's). A server that took a fee, or claimed part, and did not say so shows the rise
 * of what it did; a step sized from the pending seen instead would draw on the wallet's balance.
 */
export function provedClaimed(before: Before, after: After): Lamports | undefined {
  if (before.lifetimeLamports === null || after.lifetimeLamports === null) return undefined;
  if (before.epoch !== undefined && after.epoch !== undefined && before.epoch !== after.epoch) return undefined;
  const rise = after.lifetimeLamports - BigInt(before.lifetimeLamports);
  if (rise <= 0n) return undefined;
  const pendingBefore = BigInt(before.pendingLamports);
  return rise < pendingBefore ? rise : pendingBefore;
}

/**
 * How much more than the pending seen a claim may say it took before that is an anomaly: what
 * accrues in the moment between the read and the claim — 1% of what was seen, and at least
 * 0.001 SOL. The step is bounded by what was seen either way; this only decides the alarm.
 */
export function accrualSlack(seen: Lamports): Lamports {
  const onePercent = seen / 100n;
  return onePercent > MIN_ACCRUAL_SLACK ? onePercent : MIN_ACCRUAL_SLACK;
}
const MIN_ACCRUAL_SLACK = 1_000_000n;
