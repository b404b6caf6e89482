// The notice channels (the webhook, Slack, Discord, Telegram, PagerDuty: service/channels/http.ts)
// send through undici's global dispatcher, an Agent, as the daemon runs them (the supervisor hands
// them no dispatcher). undici 7's Agent can fall into opening a connection per request for the
// life of the process once a connection ends while a request waits on its pool (helper 38,
// src/api/dispatcher.ts). The global Agent's pools have no connection limit and no
// maxRequestsPerClient, so no notice waits on a pool and the cascade is never met: these tests
// hold that, through the real notifier, against a receiver that ends connections now and then,
// and one that is slow with several notifiers sending at once. A dispatcher with a connection
// limit handed to the channels fails them (checked by hand with `new Agent({ connections: 1 })`:
// a connection nearly per notice). Counts, not times.
import { existsSync, readdirSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { Redactor } from '../../src/log/redact.js';
import type { Notifier } from '../../src/service/outbox.js';
import { createWebhookNotifier } from '../../src/service/webhook.js';
import { FakeClock } from '../support/clock.js';
import { countingServer, type CountingServer } from '../support/counting-server.js';
import { captureLog } from '../support/log.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The counting server answering 204; `next(n, path)`: resolves once n POSTs (to `path`, or to any) were answered. */
async function server(opts: Parameters<typeof countingServer>[0]): Promise<CountingServer & { next: (n: number, path?: string) => Promise<void> }> {
  const answered = new Map<string, number>();
  const waiters: Array<() => void> = [];
  const s = await countingServer({
    ...opts,
    answer: async (n, path) => {
      await opts?.answer?.(n, path);
      for (const key of [path, '']) answered.set(key, (answered.get(key) ?? 0) + 1);
      for (const w of waiters.splice(0)) w();
    },
    status: 204,
  });
  cleanups.push(s.close);
  const next = async (n: number, path = ''): Promise<void> => {
    while ((answered.get(path) ?? 0) < n) await new Promise<void>((r) => waiters.push(r));
  };
  return { ...s, next };
}

/** A webhook notifier as the daemon makes it (no dispatcher: undici's global one), pacing on a fake clock. */
function notifier(url: string): Notifier {
  const t = new FakeClock(1_800_000_001_000);
  const n = createWebhookNotifier({ url, redactor: new Redactor(), logger: captureLog().logger, clock: t, sleep: t.autoSleep });
  cleanups.push(() => n.close(1000));
  return n;
}

/** This process's open file descriptors (Linux); undefined elsewhere. Both ends of every loopback connection count. */
const fds = (): number | undefined => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : undefined);

const notice = (who: number, i: number) => ({ key: `ack:${who}:${i}`, event: 'action.acknowledged', text: `treasury: claimed ${i}`, details: { step: i } });

it('200 notices after a first, each its own POST, to a receiver that ends every 10th connection: a connection per close, not per notice, and no more than two left open', async () => {
  const s = await server({ close: (n) => n % 10 === 0 });
  const n = notifier(`${s.origin}/hook`);
  n.notify(notice(0, 0));
  await s.next(1);
  const before = fds();
  for (let i = 1; i <= 200; i++) {
    n.notify(notice(0, i));
    await s.next(i + 1);
  }
  const after = fds();
  const carried = s.carried();
  expect(carried.reduce((a, b) => a + b, 0)).toBe(201);
  // Twenty closes by the receiver, so twenty-one connections; the Agent's cascade made nearly two hundred.
  expect(carried.length).toBeLessThanOrEqual(22);
  // The connections the receiver ended are gone on this side too (no socket kept, no descriptor
  // growth): open now, at most the one the last answer is ending and one idle.
  expect(s.open()).toBeLessThanOrEqual(2);
  // And in this process, client and server ends together: a handful more descriptors than after the first notice, not twenty connections' worth.
  if (before !== undefined && after !== undefined) expect(after - before).toBeLessThanOrEqual(6);
});

it('four notifiers sending at once to one slow receiver that ends every 7th connection: connections stay bounded by the closes and the senders', async () => {
  // Answers wait a turn of the event loop or two, so the four senders' POSTs overlap.
  const s = await server({ close: (n) => n % 7 === 0, answer: (n) => new Promise((r) => setTimeout(r, n % 3)) });
  const senders = [0, 1, 2, 3].map((k) => ({ k, n: notifier(`${s.origin}/hook/${k}`) }));
  const per = 50;
  await Promise.all(
    senders.map(async ({ k, n }) => {
      for (let i = 1; i <= per; i++) {
        n.notify(notice(k, i));
        // Each sender's next notice once its last was answered: its own POSTs back to back, one notice each.
        await s.next(i, `/hook/${k}`);
      }
    }),
  );
  await s.next(200);
  const carried = s.carried();
  expect(carried.reduce((a, b) => a + b, 0)).toBe(200);
  const closes = Math.floor(200 / 7);
  // A connection for each close, and for each sender a few: a pool without a limit opens one for a
  // request whenever all of its own are busy or ending (34 to 36 seen). The cascade opened one for
  // nearly every notice (172 with a one-connection Agent).
  expect(carried.length).toBeLessThanOrEqual(closes + 4 * senders.length);
  // Open now: the pool's idle connections (6 to 8 seen), not one per close.
  expect(s.open()).toBeLessThanOrEqual(4 * senders.length);
});
