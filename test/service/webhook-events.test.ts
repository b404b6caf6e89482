// What the daemon posts (issue 13): rejected, refused, failed (signing paused), unknown, anomaly,
// an invalid reload, stale wallets and unknown steps by default; acknowledgements only when
// alerts.webhook.events asks; signed with the secret from $AUTOCLAIM_WEBHOOK_SECRET or the
// credential webhook_secret. Checked with a loopback receiver that verifies the HMAC.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WebhookCategory } from '../../src/domain.js';
import { KeyError } from '../../src/errors.js';
import { Redactor } from '../../src/log/redact.js';
import { createFailureWebhook, DEFAULT_WEBHOOK_EVENTS, type FailureWebhook } from '../../src/service/webhook-events.js';
import { captureLog } from '../support/log.js';
import { startReceiver, stopReceivers, type Post as Received } from './webhook-receiver.js';

const SECRET = 'whsec-events-canary-0123456789';

type Post = Received<{ events: Array<{ event: string; key: string; text: string; details: Record<string, unknown> }> }>;

let hook: FailureWebhook | undefined;
let tmp: string | undefined;

afterEach(async () => {
  await hook?.close(1000);
  hook = undefined;
  await stopReceivers();
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
});

async function receiver(): Promise<{ url: string; posts: Post[]; settle: (events: number) => Promise<void> }> {
  const r = await startReceiver<Post['body']>({ path: '/hooks/T0KEN', status: () => 200 });
  const count = () => r.posts.reduce((n, p) => n + p.body.events.length, 0);
  return { url: r.url, posts: r.posts, settle: (events) => r.waitFor(() => count() >= events) };
}

function verifies(headers: IncomingHttpHeaders, raw: string, secret = SECRET): boolean {
  const ts = headers['x-autoclaim-timestamp'];
  const sig = headers['x-autoclaim-signature'];
  if (typeof ts !== 'string' || typeof sig !== 'string') return false;
  const expected = createHmac('sha256', secret).update(`${ts}.${raw}`).digest();
  const given = Buffer.from(sig.replace(/^sha256=/, ''), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function everyOutcome(h: FailureWebhook): void {
  const base = { kind: 'claim' as const, wallet: 'W1', plan: 7 };
  h.onStep({ ...base, state: 'acknowledged', step: 1, amountLamports: 1_500_000_000n });
  h.onStep({ ...base, state: 'rejected', step: 2 });
  h.onStep({ ...base, state: 'failed', step: 3, code: 'bad_signature', server_message: 'missing x-acme-ts / x-acme-wallet headers', http_status: 401, request_id: 'req-3', hint: 'headers' });
  h.onStep({ ...base, state: 'unknown', step: 4 });
  h.onStep({ ...base, state: 'anomaly', step: 5, amountLamports: 9_000_000_000n });
  h.onStep({ ...base, state: 'skipped', step: 6 });
  h.onStep({ ...base, state: 'deferred', step: 7 });
  h.configInvalid(['config.yaml:4:3 schedule.poll: "*/70" in the minute field: …', 'config.yaml:8:5 wallets[0].key: wallet alpha: key file … does not exist']);
  h.alerts.notify({ key: 'wallet_stale:W1:opened', event: 'alert.opened', text: 'wallet W1: no successful poll for 5m', details: { alert: 'wallet_stale', wallet: 'W1' } });
  h.alerts.notify({ key: 'unknown_step:4:opened', event: 'alert.opened', text: 'wallet W1: claim step 4 unknown for 20m', details: { alert: 'unknown_step', step: 4 } });
  h.alerts.notify({ key: 'epoch_refused:W1:opened', event: 'alert.opened', text: "wallet W1: the API's epoch is not believed", details: { alert: 'epoch_refused', wallet: 'W1' } });
}

describe('the failure webhook', () => {
  it('posts every failure kind by default, signed, and no acknowledgement', async () => {
    const r = await receiver();
    const redactor = new Redactor();
    const log = captureLog();
    hook = createFailureWebhook({
      env: { AUTOCLAIM_WEBHOOK_URL: r.url, AUTOCLAIM_WEBHOOK_SECRET: SECRET },
      logger: log.logger,
      redactor,
      events: () => DEFAULT_WEBHOOK_EVENTS,
      minIntervalMs: 0,
    });
    expect(hook).toBeDefined();
    if (hook === undefined) return;
    everyOutcome(hook);
    await r.settle(8);
    await hook.close(1000);
    const events = r.posts.flatMap((p) => p.body.events);
    expect(events.map((e) => [e.event, e.details['category']])).toEqual([
      ['action.rejected', 'rejected'],
      ['signing.paused', 'failed'],
      ['action.unknown', 'unknown'],
      ['action.anomaly', 'anomaly'],
      ['config.invalid', 'config_invalid'],
      ['alert.opened', 'stale'],
      ['alert.opened', 'unknown_step'],
      ['alert.opened', 'epoch_refused'],
    ]);
    expect(events[1]?.text).toMatch(/signing is paused until the config changes or the daemon restarts/);
    // The server's words travel with the notice (issue 27), for the channels to render.
    expect(events[1]?.text).toMatch(/bad_signature "missing x-acme-ts \/ x-acme-wallet headers" \(HTTP 401, request id req-3\)/);
    expect(events[1]?.details).toMatchObject({ code: 'bad_signature', server_message: 'missing x-acme-ts / x-acme-wallet headers', http_status: 401, request_id: 'req-3', hint: 'headers' });
    expect(events[4]?.text).toMatch(/previous one keeps running[\s\S]*schedule\.poll[\s\S]*wallets\[0\]\.key/);
    for (const p of r.posts) expect(verifies(p.headers, p.raw)).toBe(true);
    // URL and secret are scrubbed from anything logged.
    expect(redactor.redact(`${r.url} ${SECRET}`)).not.toMatch(/T0KEN|canary/);
  });

  it('adds acknowledgements when asked, behind the failures', async () => {
    const r = await receiver();
    const all: WebhookCategory[] = [...DEFAULT_WEBHOOK_EVENTS, 'acknowledged'];
    hook = createFailureWebhook({ env: { AUTOCLAIM_WEBHOOK_URL: r.url }, logger: captureLog().logger, redactor: new Redactor(), events: () => all, minIntervalMs: 0 });
    if (hook === undefined) throw new Error('no webhook');
    const base = { kind: 'deposit' as const, wallet: 'W2', plan: 9 };
    hook.onStep({ ...base, state: 'rejected', step: 20 }); // goes out at once
    await r.settle(1);
    hook.onStep({ ...base, state: 'acknowledged', step: 21, amountLamports: 1n, symbol: 'SOL2X', tx: 'tx-21' });
    hook.onStep({ ...base, state: 'unknown', step: 22, amountLamports: 2_000_000_000n, symbol: 'SOL2X', tx: 'tx-22' });
    await r.settle(3);
    const events = r.posts.flatMap((p) => p.body.events);
    expect(events.map((e) => e.key)).toEqual(['rejected:step:20', 'unknown:step:22', 'acknowledged:step:21']);
    // The vault's symbol and the answer's tx travel with the notice, in its words and its details (issue 27).
    expect(events[1]?.text).toMatch(/^wallet W2: deposit of 2 SOL \(SOL2X\) step 22 \(plan 9\): outcome unknown \(the answer named tx tx-22\);/);
    expect(events[1]?.details).toMatchObject({ op: 'deposit', amount_sol: '2', symbol: 'SOL2X', tx: 'tx-22' });
    expect(events[2]?.text).toBe('wallet W2: deposit 0.000000001 SOL (SOL2X) acknowledged (plan 9, tx tx-21)');
    expect(events[2]?.details).toMatchObject({ symbol: 'SOL2X', tx: 'tx-21' });
    // A burn gives up tokens, not SOL (helper 34): its amount is never amount_sol, nor "SOL" in words.
    hook.onStep({ ...base, kind: 'burn', state: 'unknown', step: 23, amountLamports: 4_000_000_000n, symbol: 'SOL5X' });
    hook.onStep({ ...base, kind: 'withdraw', state: 'acknowledged', step: 24, amountLamports: 1_500_000_000n, symbol: 'SOL2X' });
    await r.settle(5);
    const units = r.posts.flatMap((p) => p.body.events).slice(3);
    expect(units.map((e) => e.key)).toEqual(['unknown:step:23', 'acknowledged:step:24']);
    expect(units[0]?.text).toMatch(/^wallet W2: burn of 4 SOL5X tokens step 23 \(plan 9\): outcome unknown/);
    expect(units[0]?.details).toMatchObject({ op: 'burn', amount_units: '4', unit: 'SOL5X tokens' });
    expect(units[0]?.details).not.toHaveProperty('amount_sol');
    expect(units[1]?.text).toBe('wallet W2: withdraw 1.5 SOL2X vault shares acknowledged (plan 9)');
    // No secret configured: unsigned.
    expect(r.posts[0]?.headers['x-autoclaim-signature']).toBeUndefined();
  });

  it('follows alerts.webhook.events as it is now (a reload applies at once)', async () => {
    const r = await receiver();
    let events: WebhookCategory[] = ['config_invalid'];
    hook = createFailureWebhook({ env: { AUTOCLAIM_WEBHOOK_URL: r.url }, logger: captureLog().logger, redactor: new Redactor(), events: () => events, minIntervalMs: 0 });
    if (hook === undefined) throw new Error('no webhook');
    hook.onStep({ kind: 'claim', wallet: 'W', plan: 1, state: 'rejected', step: 1 });
    events = ['rejected'];
    hook.onStep({ kind: 'claim', wallet: 'W', plan: 1, state: 'rejected', step: 2 });
    await r.settle(1);
    expect(r.posts.flatMap((p) => p.body.events.map((e) => e.key))).toEqual(['rejected:step:2']);
  });

  it('reads URL and secret from systemd credentials, an empty credential meaning none', async () => {
    const r = await receiver();
    tmp = mkdtempSync(join(tmpdir(), 'autoclaim-creds-'));
    writeFileSync(join(tmp, 'webhook_url'), `${r.url}\n`, { mode: 0o400 });
    writeFileSync(join(tmp, 'webhook_secret'), `${SECRET}\n`, { mode: 0o400 });
    hook = createFailureWebhook({ env: { CREDENTIALS_DIRECTORY: tmp }, logger: captureLog().logger, redactor: new Redactor(), events: () => DEFAULT_WEBHOOK_EVENTS, minIntervalMs: 0 });
    if (hook === undefined) throw new Error('no webhook');
    hook.onStep({ kind: 'claim', wallet: 'W', plan: 1, state: 'failed', step: 3 });
    await r.settle(1);
    expect(verifies(r.posts[0]?.headers ?? {}, r.posts[0]?.raw ?? '')).toBe(true);
    await hook.close(1000);
    // The unit's SetCredential=webhook_secret: default, when no file was there to load.
    writeFileSync(join(tmp, 'webhook_secret'), '', { mode: 0o600 });
    hook = createFailureWebhook({ env: { CREDENTIALS_DIRECTORY: tmp }, logger: captureLog().logger, redactor: new Redactor(), events: () => DEFAULT_WEBHOOK_EVENTS, minIntervalMs: 0 });
    hook?.onStep({ kind: 'claim', wallet: 'W', plan: 1, state: 'failed', step: 4 });
    await r.settle(2);
    expect(r.posts[1]?.headers['x-autoclaim-signature']).toBeUndefined();
  });

  it('refuses a secret shorter than 16 characters, without showing it; no URL, no webhook', () => {
    const make = (env: NodeJS.ProcessEnv) => createFailureWebhook({ env, logger: captureLog().logger, redactor: new Redactor(), events: () => DEFAULT_WEBHOOK_EVENTS });
    let err: unknown;
    try {
      make({ AUTOCLAIM_WEBHOOK_URL: 'http://127.0.0.1:9/x', AUTOCLAIM_WEBHOOK_SECRET: 'tiny-secret' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KeyError);
    expect((err as KeyError).code).toBe('WEBHOOK_SECRET_TOO_SHORT');
    expect((err as Error).message).not.toContain('tiny-secret');
    expect(make({})).toBeUndefined();
  });

  it('posts only what reaches alerts.webhook.min_severity, and says how severe each is', async () => {
    const r = await receiver();
    let min: 'info' | 'critical' = 'critical';
    hook = createFailureWebhook({ env: { AUTOCLAIM_WEBHOOK_URL: r.url }, logger: captureLog().logger, redactor: new Redactor(), events: () => DEFAULT_WEBHOOK_EVENTS, minSeverity: () => min, minIntervalMs: 0 });
    if (hook === undefined) throw new Error('no webhook');
    const base = { kind: 'claim' as const, wallet: 'W', plan: 1 };
    hook.onStep({ ...base, state: 'rejected', step: 1 });
    hook.onStep({ ...base, state: 'failed', step: 2 });
    await r.settle(1);
    min = 'info';
    hook.onStep({ ...base, state: 'anomaly', step: 3, amountLamports: 1n });
    await r.settle(2);
    expect(r.posts.flatMap((p) => p.body.events.map((e) => [e.key, e.details['severity']]))).toEqual([
      ['failed:step:2', 'critical'],
      ['anomaly:step:3', 'warning'],
    ]);
  });
});
