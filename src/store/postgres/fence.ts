// Fencing: a plan or step write for a wallet commits only while the writer holds that wallet's
// lease, checked in the write's own transaction. The check takes the lease row FOR SHARE, so a
// takeover (an UPDATE of the row's owner and token) waits for every fenced transaction in flight to
// commit or roll back, and a write that starts after the takeover sees the new owner and is
// refused. So a `sending` either committed before the new owner took the wallet (and its
// recoverInFlight turns it into unknown) or never committed at all (and nothing was sent).
import { StateError } from '../../errors.js';
import type { Sql } from './db.js';

/** Whose writes these are, and the token held for a wallet (the lease manager's view). */
export interface Fence {
  owner: string;
  tokenFor(address: string): bigint | undefined;
}

export function leaseLost(address: string, why: string): StateError {
  return new StateError('STATE_LEASE_LOST', `the lease on wallet ${address} is lost (${why}); its writes are refused`);
}

/** The token to fence a write with; throws (touching nothing) when the lease is not believed held. */
export function tokenOrThrow(fence: Fence, address: string): bigint {
  const token = fence.tokenFor(address);
  if (token === undefined) throw leaseLost(address, 'not held by this daemon');
  return token;
}

/**
 * In the caller's transaction: the lease row of `address` with this owner and token, unexpired by
 * the database's clock, locked FOR SHARE until commit. Throws STATE_LEASE_LOST when there is none.
 */
export async function checkLease(c: Sql, fence: Fence, address: string): Promise<void> {
  const token = tokenOrThrow(fence, address);
  if (!(await leaseRow(c, fence.owner, token, address))) throw leaseLost(address, `owner ${fence.owner} with token ${token} does not hold it now`);
}

/** checkLease's answer as a boolean, for a write that is dropped rather than refused without the lease (a poll record). */
export async function holdsLease(c: Sql, fence: Fence, address: string): Promise<boolean> {
  const token = fence.tokenFor(address);
  return token !== undefined && (await leaseRow(c, fence.owner, token, address));
}

async function leaseRow(c: Sql, owner: string, token: bigint, address: string): Promise<boolean> {
  const r = await c.query('SELECT 1 FROM leases WHERE address = $1 AND owner = $2 AND token = $3 AND expires_at > now() FOR SHARE', [address, owner, token.toString()]);
  return r.rows.length > 0;
}
