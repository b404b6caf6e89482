// The notifier: every notice autoclaim sends a human goes through here, whatever the channel.
// A channel is a formatter and a transport (webhook.ts is the first; issue 27's Slack, Discord,
// Telegram, e-mail and PagerDuty are meant to be more of the same); this file owns what they share:
//
// - Redaction, in one place: a notice is scrubbed by the process's Redactor when it is accepted
//   (before it is kept anywhere), and the channel's request body is scrubbed again immediately
//   before it is sent, so a secret registered in between (a reload's new key) is caught too, and no
//   caller and no channel can forget.
// - Keeping: failure notices wait in the state database's outbox (store port outbox*) until their
//   receiver took them or they expire (alerts.webhook.expire_after, default 24 h), so a receiver
//   down for an hour or a daemon restart loses nothing. Acknowledgements (priority `info`) wait in a
//   bounded memory queue: they are many, and losing one to a restart costs nothing but a line.
//   Without a store (tests, a command that has none) failures wait in memory too.
// - Retrying: a notice not delivered is tried again after a bounded, jittered exponential backoff,
//   or after the receiver's Retry-After (seconds or an HTTP date), capped.
// - Never blocking: notify() is synchronous and never throws; delivery runs in the background, one
//   POST at a time under one overall deadline (the channel's transport enforces it with an
//   AbortSignal), failures before acknowledgements, paced by minIntervalMs. close() waits at most
//   its timeout, then aborts the POST in flight; what is in the outbox is sent after the restart.
import type { Clock } from '../domain.js';
import { systemClock } from '../domain.js';
import type { Logger } from '../log/logger.js';
import { toJson } from '../json.js';
import type { Store } from '../store/port.js';
import type { OutboxDraft, OutboxRow } from '../store/rows.js';
import { memoryOutbox, type MemoryOutbox } from './memory-outbox.js';
import type { NotificationOutcome } from './metrics.js';

export type NoticePriority = 'failure' | 'info';

/** What a caller hands the notifier. */
export interface Notice {
  /** Same key within the dedupe window = sent once, e.g. "rejected:step:42". */
  key: string;
  /** The log event it mirrors, e.g. "action.rejected", "alert.opened". */
  event: string;
  text: string;
  details?: Record<string, unknown>;
  /** Failures are kept in the outbox and go first; acknowledgements are `info`. Default `failure`. */
  priority?: NoticePriority;
}

/** A notice as a channel formats it: redacted, with the time it was accepted. */
export interface KeptNotice {
  key: string;
  event: string;
  text: string;
  details: Record<string, unknown>;
  /** Wall-clock Unix ms when notify() accepted it. */
  at: number;
}

/** What one attempt to send came to. */
export type SendResult =
  | { ok: true; status: number }
  | { ok: false; status?: number | undefined; error: string; retryAfterMs?: number | undefined };

/** A channel: how a batch of notices is written (format) and carried (send). */
export interface NoticeChannel {
  /** The outbox's channel column, e.g. "webhook". */
  readonly name: string;
  /** Where it goes, for logs: a host, never a URL (a URL may be a secret). */
  readonly host: string;
  /** The request body for a batch. */
  format(batch: readonly KeptNotice[]): string;
  /** Sends `body` (already redacted) and resolves; never rejects. Stops when `signal` aborts. */
  send(body: string, signal: AbortSignal): Promise<SendResult>;
}

export interface Notifier {
  notify(notice: Notice): void;
  /** Stops accepting notices, delivers what is due for up to timeoutMs (0: none), then stops. */
  close(timeoutMs?: number): Promise<void>;
}

/** The store port's outbox methods (both adapters; a memory one stands in without a store). */
export type OutboxStore = Pick<Store, 'outboxAdd' | 'outboxClaim' | 'outboxDelivered' | 'outboxRetry' | 'outboxExpire'>;

export interface NotifierOptions {
  channel: NoticeChannel;
  /** Scrubs every notice and every body; the logger's Redactor. */
  redactor: { redact(text: string): string };
  logger: Logger;
  /** Where failures are kept; in memory (bounded by maxQueue) when absent. */
  store?: OutboxStore | undefined;
  clock?: Clock;
  /** The pacing wait; tests pass one that moves a fake clock. */
  sleep?: (ms: number) => Promise<void>;
  /** Math.random by default; a seeded one in tests. */
  random?: () => number;
  onOutcome?: (outcome: NotificationOutcome) => void;
  /** A notice not delivered by then is dropped (outcome `expired`); default 24 h. */
  expireMs?: number;
  /** One POST, headers and body, within this; default 10 s. */
  deadlineMs?: number;
  /** At most one POST per this many ms; default 2000 (Discord allows ~30 a minute). */
  minIntervalMs?: number;
  /** A key seen within this window is dropped; default 1 hour. */
  dedupeMs?: number;
  /** Failures kept in memory (no store) beyond this are dropped; default 1000. */
  maxQueue?: number;
  /** Acknowledgements waiting beyond this are dropped; default 100. */
  maxInfoQueue?: number;
  /** Notices in one POST; default 20. */
  maxBatch?: number;
  /** The first retry's wait; doubled per attempt, jittered, up to retryMaxMs. Default 5 s. */
  retryBaseMs?: number;
  /** Default 10 min. */
  retryMaxMs?: number;
  /** A receiver's Retry-After is honoured up to this; default 1 h. */
  retryAfterCapMs?: number;
  /** When idle, the outbox is looked at again after this (retries due, another daemon's notices); default 5 s. */
  idleMs?: number;
}

const MINUTE = 60_000;
export function createOutboxNotifier(opts: NotifierOptions): Notifier {
  const { channel, logger: log, redactor } = opts;
  const clock = opts.clock ?? systemClock;
  const sleep = opts.sleep ?? realSleep;
  const random = opts.random ?? Math.random;
  const expireMs = opts.expireMs ?? 24 * 60 * MINUTE;
  const deadlineMs = opts.deadlineMs ?? 10_000;
  const minInterval = opts.minIntervalMs ?? 2000;
  const dedupeMs = opts.dedupeMs ?? 60 * MINUTE;
  const maxBatch = Math.max(1, opts.maxBatch ?? 20);
  const retryBase = opts.retryBaseMs ?? 5000;
  const retryMax = opts.retryMaxMs ?? 10 * MINUTE;
  const retryAfterCap = opts.retryAfterCapMs ?? 60 * MINUTE;
  const idleMs = opts.idleMs ?? 5000;
  const host = channel.host;
  // A claim outlives the POST it is for (plus a margin), so no other reader takes the row meanwhile,
  // and lapses by itself if this process dies holding it.
  const claimMs = deadlineMs + minInterval + 5000;

  const memoryFailures = opts.store === undefined ? memoryOutbox(opts.maxQueue ?? 1000) : undefined;
  const durable: OutboxStore = opts.store ?? (memoryFailures as MemoryOutbox);
  const info = memoryOutbox(opts.maxInfoQueue ?? 100);
  const sources: Record<NoticePriority, OutboxStore> = { failure: durable, info };
  const kept = opts.store !== undefined;

  const seen = new Map<string, number>(); // key → monotonic ms when accepted
  /** Failures accepted but not yet written to the store (written by the loop, which may await). */
  const unwritten: OutboxDraft[] = [];
  const dropWarned: Record<NoticePriority, boolean> = { failure: false, info: false };
  let lastPostAt: number | undefined;
  let closed = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let inFlight: AbortController | undefined;
  /** When the earliest retry this loop scheduled is due (wall-clock ms). */
  let retryHint: number | undefined;
  /** A notice came since the last claim: do not idle. */
  let dirty = false;
  /** close() ran out of time: no new POST starts. */
  let halted = false;

  const outcome = (o: NotificationOutcome, n = 1): void => {
    try {
      for (let i = 0; i < n; i++) opts.onOutcome?.(o);
    } catch {
      // a metrics hook must not break notifications
    }
  };

  const dropped = (priority: NoticePriority, key: string): void => {
    outcome('dropped');
    const level = dropWarned[priority] ? 'debug' : 'warn';
    log[level]({ event: 'notify.webhook_dropped', key, priority, channel: channel.name }, `${channel.name} ${priority} queue full; notification dropped`);
    dropWarned[priority] = true;
  };

  /** The notice as kept: JSON text, every registered secret already scrubbed. */
  const keep = (n: Notice): OutboxDraft => {
    const at = clock.now();
    const body: KeptNotice = { key: n.key, event: n.event, text: n.text, details: n.details ?? {}, at };
    // The row's key is the notice's and when it was accepted: the dedupe window (seen) decides
    // what is a repeat; a key notified again after it must not collide with its predecessor still
    // in flight.
    return { channel: channel.name, key: redactor.redact(`${n.key}@${at}`), body: redactor.redact(toJson(body)), expiresAt: at + expireMs };
  };

  const writeUnwritten = async (): Promise<void> => {
    while (unwritten.length > 0) {
      const draft = unwritten[0] as OutboxDraft;
      await durable.outboxAdd(draft, clock.now());
      unwritten.shift();
    }
  };

  const expire = async (): Promise<void> => {
    const now = clock.now();
    for (const source of [durable, info]) {
      const gone = await source.outboxExpire(channel.name, now);
      if (gone.length === 0) continue;
      outcome('expired', gone.length);
      log.warn(
        { event: 'notify.webhook_expired', channel: channel.name, host, notices: gone.length, keys: gone.slice(0, 5).map((r) => r.key), last_error: gone[0]?.lastError },
        `${gone.length} ${channel.name} notification(s) expired undelivered`,
      );
    }
  };

  /** Up to maxBatch due notices: failures first, then acknowledgements. */
  const claim = async (): Promise<Array<{ row: OutboxRow; priority: NoticePriority }>> => {
    const now = clock.now();
    const until = now + claimMs;
    const batch: Array<{ row: OutboxRow; priority: NoticePriority }> = (await durable.outboxClaim(channel.name, now, maxBatch, until)).map((row) => ({ row, priority: 'failure' }));
    if (batch.length < maxBatch) {
      for (const row of await info.outboxClaim(channel.name, now, maxBatch - batch.length, until)) batch.push({ row, priority: 'info' });
    }
    return batch;
  };

  const settle = async (batch: Array<{ row: OutboxRow; priority: NoticePriority }>, result: SendResult): Promise<void> => {
    const keys = batch.map((b) => b.row.key.replace(/@\d+$/, ''));
    const key = keys.length === 1 ? keys[0] : `${keys[0]} (+${keys.length - 1})`;
    for (const priority of ['failure', 'info'] as const) {
      const ids = batch.filter((b) => b.priority === priority).map((b) => b.row.id);
      if (ids.length === 0) continue;
      if (result.ok) await sources[priority].outboxDelivered(ids);
      else {
        const attempts = Math.min(...batch.filter((b) => b.priority === priority).map((b) => b.row.attempts));
        const nextAt = clock.now() + retryDelay(attempts, result.retryAfterMs);
        retryHint = Math.min(retryHint ?? nextAt, nextAt);
        await sources[priority].outboxRetry(ids, nextAt, result.error);
      }
    }
    if (result.ok) {
      outcome('sent', batch.length);
      log.debug({ event: 'notify.webhook_sent', channel: channel.name, key, events: batch.length, host }, `${channel.name} notification sent`);
    } else {
      outcome('failed', batch.length);
      log.warn(
        { event: 'notify.webhook_failed', channel: channel.name, key, events: batch.length, host, status: result.status, err: result.error, attempt: batch[0]?.row.attempts },
        `${channel.name} notification not delivered (${result.error}); it will be tried again`,
      );
    }
  };

  /** Exponential from retryBase, capped, with jitter (half to all of it); a Retry-After wins, capped. */
  const retryDelay = (attempts: number, retryAfterMs: number | undefined): number => {
    if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), retryAfterCap);
    const exp = Math.min(retryMax, retryBase * 2 ** Math.min(attempts, 30));
    return Math.round(exp * (0.5 + random() / 2));
  };

  const post = async (batch: Array<{ row: OutboxRow; priority: NoticePriority }>): Promise<SendResult> => {
    const notices = batch.map(({ row }) => readKept(row, redactor));
    // The one place a body is made and sent: scrubbed immediately before it leaves.
    const body = redactor.redact(channel.format(notices));
    const abort = new AbortController();
    inFlight = abort;
    const timer = setTimeout(() => abort.abort(new Error(`no complete answer within ${deadlineMs} ms`)), deadlineMs);
    try {
      return await channel.send(body, abort.signal);
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    } finally {
      clearTimeout(timer);
      inFlight = undefined;
    }
  };

  /** Waits for a notify(), close(), the earliest retry, or idleMs, whichever comes first. */
  const idle = (): Promise<void> =>
    new Promise<void>((resolve) => {
      if (dirty || closed) {
        resolve();
        return;
      }
      const until = retryHint === undefined ? idleMs : Math.min(idleMs, Math.max(0, retryHint - clock.now()));
      const timer = setTimeout(done, until);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  const run = async (): Promise<void> => {
    for (;;) {
      if (halted) return;
      try {
        // Cleared before the notices are written: one that comes during this round makes idle() return at once.
        dirty = false;
        await writeUnwritten();
        await expire();
        const batch = await claim();
        if (batch.length === 0) {
          // A retry not yet due keeps the wait short; one that was due and found nothing is spent.
          if (retryHint !== undefined && retryHint <= clock.now()) retryHint = undefined;
          if (closed) return;
          await idle();
          continue;
        }
        // Paced after the claim, so an idle notifier never waits for nothing; the claim outlasts the wait.
        if (lastPostAt !== undefined) {
          const wait = lastPostAt + minInterval - clock.monotonic();
          if (wait > 0) await sleep(wait);
        }
        if (halted) return; // stopped at once meanwhile (close(0)): not sent; its claim lapses for another notifier
        lastPostAt = clock.monotonic();
        await settle(batch, await post(batch));
      } catch (err) {
        // The store could not be read or written (a StateError): the notices stay where they are.
        log.warn({ event: 'notify.webhook_failed', channel: channel.name, host, err }, `${channel.name} outbox unavailable; trying again`);
        if (closed) return;
        dirty = false;
        await idle();
      }
    }
  };

  const start = (): void => {
    if (loop !== undefined) {
      wake?.();
      return;
    }
    loop = run().finally(() => {
      loop = undefined;
    });
  };

  // Notices kept by an earlier run (or another daemon) are due now: the loop starts with the notifier.
  if (kept) start();

  return {
    notify(n) {
      try {
        if (closed) return;
        const now = clock.monotonic();
        for (const [k, at] of seen) if (now - at > dedupeMs) seen.delete(k);
        if (seen.has(n.key)) return;
        const priority = n.priority ?? 'failure';
        const draft = keep(n);
        if (priority === 'failure' && kept) unwritten.push(draft);
        else if (!(sources[priority].outboxAdd(draft, clock.now()) as boolean)) {
          dropped(priority, redactor.redact(n.key));
          return;
        }
        seen.set(n.key, now);
        dirty = true;
        start();
      } catch (err) {
        log.warn({ event: 'notify.webhook_failed', channel: channel.name, host, err }, `${channel.name} notification not queued`);
      }
    },
    async close(closeTimeoutMs = 5000) {
      closed = true;
      halted = closeTimeoutMs <= 0; // 0: no new POST from now (a reload that replaced this channel)
      wake?.();
      const running = loop;
      if (running !== undefined) {
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), closeTimeoutMs);
        });
        const how = await Promise.race([running.then(() => 'done' as const), deadline]);
        clearTimeout(timer);
        if (how === 'timeout') {
          halted = true;
          inFlight?.abort(new Error('the daemon is stopping'));
          await running.catch(() => undefined);
        }
      }
      // Failures not yet written are written now, so the next start sends them; memory ones are lost.
      try {
        await writeUnwritten();
      } catch (err) {
        log.warn({ event: 'notify.webhook_failed', channel: channel.name, host, err }, `${channel.name} notifications could not be kept for the next start`);
      }
      const left = (memoryFailures?.size ?? 0) + info.size + unwritten.length;
      if (left > 0) {
        outcome('dropped', left);
        log.warn({ event: 'notify.webhook_dropped', channel: channel.name, queued: left }, `shutting down with ${left} ${channel.name} notification(s) unsent and not kept`);
      }
    },
  };
}

/** A kept notice back from its JSON; the text is redacted again (a secret registered since). */
function readKept(row: OutboxRow, redactor: { redact(text: string): string }): KeptNotice {
  try {
    const parsed = JSON.parse(redactor.redact(row.body)) as Partial<KeptNotice>;
    return {
      key: typeof parsed.key === 'string' ? parsed.key : row.key,
      event: typeof parsed.event === 'string' ? parsed.event : 'notice',
      text: typeof parsed.text === 'string' ? parsed.text : '',
      details: parsed.details !== null && typeof parsed.details === 'object' ? parsed.details : {},
      at: typeof parsed.at === 'number' ? parsed.at : row.createdAt,
    };
  } catch {
    return { key: row.key, event: 'notice', text: '(a notice that could not be read back from the outbox)', details: {}, at: row.createdAt };
  }
}

const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
