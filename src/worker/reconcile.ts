// Deciding whether a claim whose answer was lost was applied (SPEC §2): read the summary again and
// compare it with the one recorded just before the claim was signed. Pure, so it is table-tested.
import type { Lamports, WalletSummary } from '../domain.js';

export interface ClaimVerdict {
  applied: boolean;
  /** A lower bound of what was claimed, when applied: deposits of "N%" are computed from it. */
  claimedLamports: Lamports | undefined;
  note: string;
}

/**
 * Applied when lifetime rose or pending dropped. Both are checked and either suffices: if the
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
      applied: true,
      claimedLamports: delta < pendingBefore ? delta : pendingBefore,
      note: `lifetime rose by ${delta} lamports`,
    };
  }
  if (after.pendingLamports < pendingBefore) {
    return {
      applied: true,
      claimedLamports: pendingBefore - after.pendingLamports,
      note: `pending dropped from ${pendingBefore} to ${after.pendingLamports} lamports`,
    };
  }
  return {
    applied: false,
    claimedLamports: undefined,
    note: `pending did not drop (${pendingBefore} → ${after.pendingLamports} lamports) and lifetime did not rise`,
  };
}
