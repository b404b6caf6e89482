// Two things that decide whether and when a request may be signed, kept per wallet address:
// the timestamp it carries (strictly rising, never far ahead of the clock) and the pause after the
// server refused a request as invalid. State only; the executor asks, the outcome recorder tells.
import type { Clock } from '../domain.js';
import type { Logger } from '../log/logger.js';
import type { Awaitable } from '../store/port.js';
import type { SigningPause } from './deps.js';
import { checkSignResult } from '../keys/check.js';
import { SIGNER_UNAVAILABLE, SignerRefused, type SignAction, type WalletSigner } from '../keys/port.js';

/** How long a signer may take to answer before the step goes back to planned, unsent. */
export const DEFAULT_SIGN_DEADLINE_MS = 10_000;


/**
 * How long, after a request to a backend location went unanswered past its deadline, the others
 * for that location are put back at once instead of each waiting out the deadline: the fleet's
 * turns share a few lanes, and a hung Vault, KMS, HSM or signer service held one for every wallet
 * with a step to sign, slowing every wallet's polls. An answer from the location ends it sooner.
 */
export const HUNG_BACKEND_PAUSE_MS = 30_000;

/** Per backend location, until when (monotonic ms) it is not asked: it left a request unanswered. */
const hungUntil = new Map<string, number>();

/** What the wallet's signer said, checked: a signature over the expected text by the wallet's key, or why not. */
export type SignVerdict =
  | { ok: true; signature: Uint8Array; seconds: number }
  | { ok: false; unanswered: boolean; code: string; detail: string; seconds: number };

/**
 * Asks `signer` for `action` under a deadline, and checks its answer (keys/check.ts): the
 * message must be `expected` and the signature the wallet's. Never throws.
 */
export async function askSigner(signer: WalletSigner, action: SignAction, expected: string, deadlineMs: number, clock: Pick<Clock, 'monotonic'>): Promise<SignVerdict> {
  const started = clock.monotonic();
  const seconds = (): number => (clock.monotonic() - started) / 1000;
  const location = signer.location;
  const until = location === undefined ? undefined : hungUntil.get(location);
  if (location !== undefined && until !== undefined) {
    if (started < until) {
      const detail = `the ${signer.backend} signer at ${location} left a request unanswered past ${deadlineMs} ms; not asked again for ${Math.ceil((until - started) / 1000)} s`;
      return { ok: false, unanswered: true, code: SIGNER_UNAVAILABLE, detail, seconds: 0 };
    }
    hungUntil.delete(location);
  }
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => resolve('deadline'), deadlineMs);
  });
  try {
    const asked = signer.sign(action, ac.signal);
    // Any answer, even a late one or a refusal, says the location is alive again.
    // (Not the backend's own rejection of the abort below, which is no answer.)
    if (location !== undefined) {
      asked.then(
        () => hungUntil.delete(location),
        (err: unknown) => !ac.signal.aborted && err instanceof SignerRefused && err.code !== SIGNER_UNAVAILABLE && hungUntil.delete(location),
      );
    }
    const answer = await Promise.race([asked, deadline]);
    if (answer === 'deadline') {
      ac.abort();
      if (location !== undefined) hungUntil.set(location, clock.monotonic() + HUNG_BACKEND_PAUSE_MS);
      return { ok: false, unanswered: true, code: 'SIGNER_TIMEOUT', detail: `the ${signer.backend} signer did not answer within ${deadlineMs} ms`, seconds: seconds() };
    }
    return { ok: true, signature: checkSignResult(signer.address, expected, answer), seconds: seconds() };
  } catch (err) {
    const code = err instanceof SignerRefused ? err.code : 'SIGNER_ERROR';
    const detail = err instanceof Error ? err.message : String(err);
    return { ok: false, unanswered: code === SIGNER_UNAVAILABLE, code, detail, seconds: seconds() };
  } finally {
    clearTimeout(timer);
  }
}

/** What SigningTime asks the store: the store port's two questions about signed seconds. */
export interface SignedSeconds {
  lastRequestTs(address: string): Awaitable<number | undefined>;
  requestTsFrom(address: string, fromTs: number, limit: number): Awaitable<number[]>;
}

/** How many taken seconds one question to the store returns. */
const TAKEN_PAGE = 256;

/**
 * How far ahead of the wall clock a wallet's last signed timestamp may be and still be followed.
 * Ours run ahead by a second per request when a wallet signs several in one second — in this
 * process, or in one before a restart, whose timestamps only the database remembers. Beyond this,
 * the timestamp was signed under a clock that was wrong.
 */
export const MAX_TS_AHEAD_S = 60;

/**
 * The time a new signed request carries. Ed25519 is deterministic and the claim message is
 * `{wallet}|{ts}`, so two claims in one second would carry the same signature: the second would be
 * refused as a replay, or taken by a server that answers a replay with the first one's result for
 * a claim of its own. Each request of a wallet therefore gets a strictly newer second than the
 * last one it signed, in this process or (from the database) any earlier one. The database is
 * asked every time and the newer of the two wins: with shared state another daemon may have
 * signed for this wallet since this one last did (its lease moved away and back).
 *
 * Not when that last timestamp is more than MAX_TS_AHEAD_S ahead of the wall clock: it was signed
 * under a clock that was wrong, and following it would get every request refused as from the
 * future until the clock caught up. It is dropped, with a warning. A restart after a burst is not
 * that: its last timestamps are a few seconds ahead, and are followed. (They were once dropped
 * beyond 5 s when read from the database, and the next request reused a second already signed:
 * two claims with one signature, seen in the random-crash test.)
 *
 * Below a dropped timestamp, seconds may already be taken: by the wrong clock (which may have
 * been behind, too, before it was set ahead), or by this process's own run ahead of the clock. So
 * while the next second is not past the newest one dropped, the store is asked which seconds from
 * it on this address signed, and the first free one is taken. Without a drop nothing is asked:
 * every second signed is at most the last one, and the next is past it.
 */
export class SigningTime {
  private readonly lastTs = new Map<string, number>();
  /** Per address, the newest stored timestamp already dropped as signed under a wrong clock. */
  private readonly dropped = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly store: SignedSeconds,
  ) {}

  /** Unix milliseconds (a whole second) for the next signed request of this address. */
  async next(address: string, log: Logger): Promise<number> {
    let fromDb = (await this.store.lastRequestTs(address)) ?? 0;
    if (fromDb <= (this.dropped.get(address) ?? 0)) fromDb = 0;
    const nowSec = Math.floor(this.clock.now() / 1000);
    let last = Math.max(this.lastTs.get(address) ?? 0, fromDb);
    if (last >= nowSec + MAX_TS_AHEAD_S) {
      log.warn(
        { event: 'clock.skew', last_ts: last, now_ts: nowSec, ahead_s: last - nowSec },
        `the last signed timestamp of this wallet is ${last - nowSec}s ahead of the clock (it was signed while the clock was wrong); signing with the clock's time again`,
      );
      // The database keeps it as the newest until the clock passes it: warned once, then ignored.
      this.dropped.set(address, Math.max(last, this.dropped.get(address) ?? 0));
      last = 0;
    }
    let ts = Math.max(nowSec, last + 1);
    if (ts <= (this.dropped.get(address) ?? 0)) ts = await this.firstFree(address, ts);
    this.lastTs.set(address, ts);
    return ts * 1000;
  }

  /** The first second from `from` on that this address has not signed with. */
  private async firstFree(address: string, from: number): Promise<number> {
    let ts = from;
    for (;;) {
      const taken = await this.store.requestTsFrom(address, ts, TAKEN_PAGE);
      // Ascending and distinct, from ts on: ts moves past each one taken until a gap.
      for (const t of taken) {
        if (t > ts) return ts;
        if (t === ts) ts++;
      }
      if (taken.length < TAKEN_PAGE) return ts;
    }
  }
}

/** Signing paused for every wallet (the API key was refused) or per address; lifted by a restart or lift(). */
export class SigningPauses {
  private all: SigningPause | undefined;
  private readonly wallets = new Map<string, SigningPause>();

  pausedFor(address: string): SigningPause | undefined {
    return this.all ?? this.wallets.get(address);
  }

  pause(address: string, p: SigningPause): void {
    if (p.scope === 'all') this.all = p;
    else this.wallets.set(address, p);
  }

  current(): { all: SigningPause | undefined; wallets: ReadonlyMap<string, SigningPause> } {
    return { all: this.all, wallets: this.wallets };
  }

  /** Lifts every pause; returns how many there were. */
  lift(): number {
    const n = this.wallets.size + (this.all === undefined ? 0 : 1);
    this.all = undefined;
    this.wallets.clear();
    return n;
  }
}
