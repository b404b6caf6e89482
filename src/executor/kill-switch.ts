// The kill switch (issue 27): signing stops, everything else goes on. Three sources, any one of
// which holds a wallet: `safety.paused: true` in the config, `autoclaim pause` on a running daemon
// (recorded in the state directory with who and when, so it survives a restart), and
// `enabled: false` on the wallet. A held wallet is still polled, its rules decided in dry mode and
// reported; the executor's gate signs nothing for it (not even a step planned before the switch).
// Neither source lifts the other: `resume` ends only the command's pause, and the config's
// only an edit and a reload. Pure: the daemon passes in what it knows.
import type { Rule, SafetyConfig, WalletConfig } from '../domain.js';
import type { SigningPause } from './deps.js';

/** `autoclaim pause` as recorded (service/control.ts): who, from where, when, why. */
export interface OperatorPause {
  paused: boolean;
  user: string;
  host: string;
  /** ms */
  at: number;
  reason?: string | undefined;
}

/** Why signing is held for this wallet (or, address undefined, for every wallet) by the kill switch. */
export function killSwitchPause(
  safety: Pick<SafetyConfig, 'paused'>,
  operator: OperatorPause | undefined,
  wallet: Pick<WalletConfig, 'enabled'> | undefined,
  now: number,
): SigningPause | undefined {
  if (operator?.paused === true) {
    const why = operator.reason === undefined || operator.reason === '' ? '' : `: ${operator.reason}`;
    return { scope: 'all', source: 'kill_switch', reason: `paused by ${operator.user}@${operator.host} (autoclaim pause)${why}`, since: operator.at, fix: 'autoclaim resume' };
  }
  if (safety.paused === true) return { scope: 'all', source: 'kill_switch', reason: 'safety.paused: true in the config', since: now, fix: 'set safety.paused: false and reload (SIGHUP)' };
  if (wallet?.enabled === false) return { scope: 'wallet', source: 'kill_switch', reason: 'enabled: false on this wallet in the config', since: now, fix: 'remove enabled: false from the wallet and reload (SIGHUP)' };
  return undefined;
}

/**
 * The kill switch for `address` among the configured wallets (by address), or for every wallet
 * (undefined). An address no wallet has — removed, or its address changed, by a reload while a step
 * of its plan waited for its fresh read — is held as if `enabled: false`: nobody signs for a wallet
 * the config no longer names, with a key read before; put back, its plan goes on.
 */
export function killSwitchFor(
  safety: Pick<SafetyConfig, 'paused'>,
  operator: OperatorPause | undefined,
  wallets: ReadonlyMap<string, Pick<WalletConfig, 'enabled'>>,
  address: string | undefined,
  now: number,
): SigningPause | undefined {
  const wallet = address === undefined ? undefined : wallets.get(address);
  const held = killSwitchPause(safety, operator, wallet, now);
  if (held !== undefined || address === undefined || wallet !== undefined) return held;
  return { scope: 'wallet', source: 'kill_switch', reason: 'no wallet in the config has this address (removed or changed by a reload)', since: now, fix: 'put the wallet back in the config and reload (SIGHUP)' };
}

/**
 * A rule's own kill switch: the plan's rule is configured now with `enabled: false` (a one-off
 * `send` has no rule). Asked where the wallet's is: before a planned step, and right before its
 * request goes out (a reload may land while the signed request waits in the rate limiter's queue,
 * a 429's pause or for a slow signer).
 */
export function ruleSwitchedOff(rules: readonly Pick<Rule, 'id' | 'enabled'>[], plan: { rule: string; manualId: string | null }): boolean {
  return plan.manualId === null && rules.some((r) => r.id === plan.rule && r.enabled === false);
}
