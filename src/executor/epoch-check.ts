// A server's epoch is a claim about the calendar, not a fact (SPEC §2). once_per_epoch, the plan
// key and every "new epoch" hang on it: a server that moves its epoch a day a second would have a
// once-a-day rule fire every second. So a polled epoch is believed only when it is a real date, lies
// at most a day from this machine's UTC date (time zones and a rollover in flight, no more), and
// does not go back before the last epoch recorded for the wallet's address. Pure: the cycle passes
// the clock reading and the recorded epoch in.
import { isEpochDate } from '../api/schema-fields.js';
import { AutoclaimError } from '../errors.js';

const DAY_MS = 86_400_000;

/** Why an epoch was refused: the `why` of `poll.failed` and of the epoch_refused alert. */
export type EpochRefusal = 'not_a_date' | 'too_far' | 'backward';

export type EpochVerdict = { ok: true } | { ok: false; why: EpochRefusal; detail: string };

export interface EpochInput {
  epoch: string;
  /** The wall clock (the injected one): its UTC date is "today". */
  nowMs: number;
  /** The last epoch recorded for this address (wallet_state), if any. */
  last: string | null | undefined;
  /**
   * The sandbox's fast demo epochs (a simulated day a minute): only the real-date check applies.
   * See epochsExempt.
   */
  exempt: boolean;
}

function dayOf(epoch: string): number {
  return Date.parse(`${epoch}T00:00:00Z`) / DAY_MS;
}

function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function judgeEpoch(input: EpochInput): EpochVerdict {
  const { epoch, last } = input;
  if (!isEpochDate(epoch)) return { ok: false, why: 'not_a_date', detail: `epoch ${JSON.stringify(epoch)} is not a real calendar date` };
  if (input.exempt) return { ok: true };
  const today = Math.floor(input.nowMs / DAY_MS);
  const days = dayOf(epoch) - today;
  if (Math.abs(days) > 1) {
    return {
      ok: false,
      why: 'too_far',
      detail: `epoch ${epoch} is ${Math.abs(days)} days ${days > 0 ? 'ahead of' : 'behind'} this machine's UTC date ${utcDate(input.nowMs)} (at most 1 is believed)`,
    };
  }
  // A recorded epoch further ahead than this check allows was recorded before it existed (or by the
  // sandbox's fast epochs): held against the wallet, it would refuse every epoch until that date.
  if (last != null && isEpochDate(last) && dayOf(last) <= today + 1 && epoch < last) {
    return { ok: false, why: 'backward', detail: `epoch ${epoch} is before ${last}, the last epoch recorded for this wallet` };
  }
  return { ok: true };
}

/** A summary's epoch refused by judgeEpoch: the poll fails with it (code INVALID_EPOCH). */
export class EpochError extends AutoclaimError {
  constructor(
    readonly epoch: string,
    readonly why: EpochRefusal,
    detail: string,
  ) {
    super('INVALID_EPOCH', `epoch refused: ${detail}; nothing is decided from this summary`);
  }
}

/** What decides the exemption: the config's API and sandbox settings, and the environment. */
export interface EpochExemptionInput {
  api?: { baseUrl?: string };
  sandbox?: { epochMs: number };
}

const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The sandbox's fast demo epochs, the one stated exception (SPEC §2):
 * - `api.base_url: sandbox` (the simulator in this process) with `sandbox.epoch` shorter than a
 *   day: what `npm start`'s demo runs; nothing but this process answers the polls.
 * - `AUTOCLAIM_SANDBOX_EPOCHS=fast` with a base_url on a loopback host: an `autoclaim sandbox`
 *   started with `--epoch-seconds` beside the daemon (the multi-daemon tests). Never a remote host,
 *   whatever the environment says, and never by anything a server sends.
 */
export function epochsExempt(config: EpochExemptionInput, env: NodeJS.ProcessEnv = {}): boolean {
  const base = config.api?.baseUrl;
  if (base === 'sandbox') return (config.sandbox?.epochMs ?? DAY_MS) < DAY_MS;
  if (env.AUTOCLAIM_SANDBOX_EPOCHS !== 'fast' || base === undefined) return false;
  try {
    return LOOPBACK_HOST.test(new URL(base).hostname);
  } catch {
    return false;
  }
}
