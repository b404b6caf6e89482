// Deciding whether a claim whose answer was lost was applied (SPEC §2): read the summary again and
// compare it with the one recorded just before the claim was signed. Pure, so it is table-tested.
import type { Lamports, WalletSummary } from '../domain.js';

interface ClaimVerdict {
  /**
   * `undetermined`: the summary cannot tell. "Not applied" lets a new claim be signed, so it needs
   * proof: lifetime known before and after and unchanged, and pending not dropped. Without
   * lifetime, pending alone cannot prove it — rewards that accrue (or jump) by more than the claim
   * hide a claim that was applied.
   */
  outcome: 'applied' | 'not_applied' | 'undetermined';
  applied: boolean;
  /** A lower bound of what was claimed, when applied: deposits of "N%" are computed from it. */
  claimedLamports: Lamports | undefined;
  note: string;
}

/**
 * Applied when lifetime rose or pending dropped; not applied only when lifetime is known on both
 * sides and did not rise (and pending did not drop); otherwise undetermined. Both are checked and either suffices: if the
 * service counts accrual in lifetime, "rose" errs towards "applied", and a claim wrongly believed
 * applied only waits for the next epoch, whereas one wrongly believed not applied would be sent
 * twice. Pending accrues between the two reads, so "dropped" is strict.
 */
export function claimLooksApplied(
  before: { pendingLamports: string; lifetimeLamports: string | null },
  after: Pick<WalletSummary, 'pendingLamports' | 'lifetimeLamports'>,
): ClaimVerdict {
  const pendingBefore = BigInt(before.pendingLamports);
  const lifetimeBefore = before.lifetimeLamports === null ? null : BigInt(before.lifetimeLamports);
  const lifetimeAfter = after.lifetimeLamports;
  if (lifetimeBefore !== null && lifetimeAfter !== null && lifetimeAfter > lifetimeBefore) {
    const delta = lifetimeAfter - lifetimeBefore;
    return {
      outcome: 'applied',
      applied: true,
      claimedLamports: delta < pendingBefore ? delta : pendingBefore,
      note: `lifetime rose by ${delta} lamports`,
    };
  }
  if (after.pendingLamports < pendingBefore) {
    return {
      outcome: 'applied',
      applied: true,
      claimedLamports: pendingBefore - after.pendingLamports,
      note: `pending dropped from ${pendingBefore} to ${after.pendingLamports} lamports`,
    };
  }
  if (lifetimeBefore === null || lifetimeAfter === null) {
    return {
      outcome: 'undetermined',
      applied: false,
      claimedLamports: undefined,
      note: `pending did not drop (${pendingBefore} → ${after.pendingLamports} lamports) and lifetime_sol is missing ${lifetimeBefore === null ? 'from the summary the claim was signed against' : 'now'}: the summary cannot tell whether the claim was applied`,
    };
  }
  return {
    outcome: 'not_applied',
    applied: false,
    claimedLamports: undefined,
    note: `pending did not drop (${pendingBefore} → ${after.pendingLamports} lamports) and lifetime did not rise`,
  };
}
