// A server that echoes the API key into what it answers (issue 11, item 5). The client scrubs
// every body the moment it is read, before anything parses, cuts or quotes it: a key cut in half
// by a one-line message no longer matches the redactor, and a key with `"` or `\` in it is written
// JSON-escaped. No 10-character piece of the key may reach an ApiError (message, rawBody,
// serverCode, serverMessage) or a log line, whatever offset the key sits at.
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import type { ApiError } from '../../src/errors.js';
import { Redactor } from '../../src/log/redact.js';
import { okPollRow } from '../../src/store/codecs.js';
import { captureLog } from '../support/log.js';
import { apiError } from './helpers.js';
import { loopback, loopbackClient, stopAll } from './loopback.js';

afterEach(() => stopAll());

const kp = generateKeypair();
const signer = signerFromSeed(kp.secretKey64.slice(0, 32));
const WALLET = kp.address;

const PLAIN_KEY = 'plainKEY-7Qk2ZxW9pLmN4vR8sT1u';
const QUOTED_KEY = 'q"uo\\ted-Key-7Qk2ZxW9pLmN4vR8'; // a quote and a backslash

/** Every 10-character piece of the key, as typed and as JSON and a URL spell it. */
function pieces(key: string): string[] {
  const out = new Set<string>();
  for (const form of [key, JSON.stringify(key).slice(1, -1), encodeURIComponent(key)]) {
    for (let i = 0; i + 10 <= form.length; i++) out.add(form.slice(i, i + 10));
  }
  return [...out];
}

function leaks(key: string, texts: Array<string | undefined>): string[] {
  const all = texts.filter((t): t is string => t !== undefined);
  return pieces(key).filter((p) => all.some((t) => t.includes(p)));
}

/** What the server answers for a request: the status and body the test queued for its path. */
type Answer = { status: number; body: string; contentType?: string };

async function echoServer(answerFor: (url: string) => Answer) {
  return loopback((req, res) => {
    const a = answerFor(req.url ?? '');
    res.writeHead(a.status, { 'content-type': a.contentType ?? 'application/json' }).end(a.body);
  });
}

function errorText(err: ApiError): Array<string | undefined> {
  return [err.message, err.rawBody, err.serverCode, err.serverMessage, err.url, ...err.issues];
}

describe('an API key echoed by the server never leaks, cut or escaped', () => {
  for (const key of [PLAIN_KEY, QUOTED_KEY]) {
    it(`403/400/500 bodies echoing ${JSON.stringify(key)} at every offset around the cuts`, async () => {
      const redactor = new Redactor().add(key);
      const log = captureLog('debug', redactor);
      let next: Answer = { status: 204, body: '' };
      const srv = await echoServer(() => next);
      const api = loopbackClient(srv.base, { readAttempts: 1 }, { apiKey: key, logger: log.logger, redact: (t) => redactor.redact(t) });
      const found: string[] = [];
      let cases = 0;
      for (const status of [400, 403, 500]) {
        // Offsets from 0 to 230 put the key across every cut: 120 (text), 160 (code: message), 200 (serverMessage).
        for (let offset = 0; offset <= 230; offset += 1) {
          const filler = '.'.repeat(offset);
          const bodies = [
            JSON.stringify({ error: { code: 'forbidden', message: `${filler}Bearer ${key} is not allowed here ${'-'.repeat(100)}` } }),
            JSON.stringify({ code: `${filler}${key}`, message: 'bad' }),
            `${filler}Authorization: Bearer ${key} was refused ${'-'.repeat(100)}`, // not JSON
            `${filler}<a href="/x?key=${encodeURIComponent(key)}">retry</a>`,
          ];
          for (const body of bodies) {
            next = { status, body, contentType: body.startsWith('{') ? 'application/json' : 'text/html' };
            const err = await apiError(api.send(api.prepare({ op: 'claim', wallet: WALLET }, signer, Date.now())));
            expect(err.status).toBe(status);
            // What a caller does with the error: log it, whole and in parts.
            log.logger.warn({ event: 'action.failed', err: err.message, raw: err.rawBody, code: err.serverCode, msg: err.serverMessage }, 'failed');
            found.push(...leaks(key, errorText(err)).map((p) => `${status}@${offset}: ${p}`));
            cases += 1;
          }
        }
      }
      expect(cases).toBe(3 * 231 * 4);
      expect(found).toEqual([]);
      expect(leaks(key, [log.text()])).toEqual([]);
      expect(log.text()).toContain('[REDACTED]');
    }, 60_000);
  }

  it('the same sweep without the client scrubbing leaks (the check above can fail)', async () => {
    const key = PLAIN_KEY;
    const srv = await echoServer(() => ({ status: 403, body: JSON.stringify({ error: { code: 'forbidden', message: `${'.'.repeat(130)}Bearer ${key}` } }) }));
    const api = loopbackClient(srv.base, { readAttempts: 1 }, { apiKey: key });
    const err = await apiError(api.send(api.prepare({ op: 'claim', wallet: WALLET }, signer, Date.now())));
    // The message was cut at 160 characters through the key; the redactor cannot see the piece.
    const cut = new Redactor().add(key).redact(err.message);
    expect(leaks(key, [cut]).length).toBeGreaterThan(0);
  });

  it('a key spelled with JSON \\u escapes is scrubbed once decoded, before any field is quoted or cut', async () => {
    const key = QUOTED_KEY;
    const redactor = new Redactor().add(key);
    const unicode = [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const srv = await echoServer((url) =>
      url.includes('/rewards/wallet/')
        ? { status: 200, body: `{"address":"${WALLET}","epoch":"2025-06-01","pending_sol":0.5,"tier":"${'.'.repeat(30)}${unicode}","note":"${unicode}"}` }
        : { status: 403, body: `{"error":{"code":"${unicode}","message":"${'.'.repeat(190)}${unicode}"}}` },
    );
    const api = loopbackClient(srv.base, { readAttempts: 1 }, { apiKey: key, redact: (t) => redactor.redact(t) });
    const refused = await apiError(api.send(api.prepare({ op: 'claim', wallet: WALLET }, signer, Date.now())));
    expect(leaks(key, errorText(refused))).toEqual([]);
    expect(refused.serverCode).toBe('[REDACTED]');
    // A summary whose decoded strings hold the key: parsed with the key scrubbed out.
    const s = await api.walletSummary(WALLET).catch((e: ApiError) => e);
    const texts = s instanceof Error ? errorText(s) : [JSON.stringify(s.raw)];
    expect(leaks(key, texts)).toEqual([]);
  });

  it('a 2xx summary echoing the key: the parsed summary is scrubbed', async () => {
    const redactor = new Redactor().add(QUOTED_KEY);
    const body = JSON.stringify({ address: WALLET, epoch: '2025-06-01', pending_sol: 0.5, echo: `Bearer ${QUOTED_KEY}` });
    const srv = await echoServer(() => ({ status: 200, body }));
    const api = loopbackClient(srv.base, {}, { apiKey: QUOTED_KEY, redact: (t) => redactor.redact(t) });
    const s = await api.walletSummary(WALLET);
    expect(s.pendingLamports).toBe(500_000_000n);
    expect((s.raw as { echo: string }).echo).toBe('Bearer [REDACTED]');
    expect(leaks(QUOTED_KEY, [JSON.stringify(s.raw)])).toEqual([]);
  });

  it('the poll record holds no spelling of a secret: neither echoed nor written in escapes the body scrub cannot see', async () => {
    const redactor = new Redactor().add(QUOTED_KEY);
    const unicode = [...QUOTED_KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const head = `{"address":"${WALLET}","epoch":"2025-06-01","pending_sol":0.5`;
    const bodies = {
      clean: `${head},"tier":"gold"}`,
      echoed: `${head},"echo":${JSON.stringify(`Bearer ${QUOTED_KEY}`)}}`,
      escaped: `${head},"echo":"${unicode}"}`,
      escapedOnly: `${head},"tier":"g\\u006fld"}`,
    };
    let next = bodies.clean;
    const srv = await echoServer(() => ({ status: 200, body: next }));
    const api = loopbackClient(srv.base, {}, { apiKey: QUOTED_KEY, redact: (t) => redactor.redact(t) });
    const stored: Record<string, string | null> = {};
    for (const [name, body] of Object.entries(bodies)) {
      next = body;
      const s = await api.walletSummary(WALLET);
      stored[name] = okPollRow('w', WALLET, 0, s, (t) => redactor.redact(t)).raw;
    }
    // The record is the parsed body serialized and scrubbed: a compact body reads as it came, and
    // escapes are written out, so that the scrub sees every secret in the one spelling it knows.
    // (Stored as received, `escaped` would spell the key in \u escapes, which no scrub of text catches.)
    expect(stored['clean']).toBe(bodies.clean);
    expect(stored['escapedOnly']).toBe(`{"address":"${WALLET}","epoch":"2025-06-01","pending_sol":0.5,"tier":"gold"}`);
    expect(stored['echoed']).toContain('Bearer [REDACTED]');
    expect(stored['escaped']).toContain('[REDACTED]');
    const decoded: string[] = [];
    for (const text of Object.values(stored)) {
      JSON.parse(text ?? 'null', (k: string, v: unknown) => {
        decoded.push(k, typeof v === 'string' ? v : '');
        return v;
      });
    }
    expect(leaks(QUOTED_KEY, [...Object.values(stored).map((t) => t ?? undefined), ...decoded])).toEqual([]);
  });

  it('the body kept of an answer to a signed request (a step’s response) holds no secret in \\u escapes, refused, malformed or applied', async () => {
    const redactor = new Redactor().add(QUOTED_KEY);
    const unicode = [...QUOTED_KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    let next: Answer = { status: 200, body: '' };
    const srv = await echoServer(() => next);
    const api = loopbackClient(srv.base, { readAttempts: 1 }, { apiKey: QUOTED_KEY, redact: (t) => redactor.redact(t) });
    const send = () => api.send(api.prepare({ op: 'claim', wallet: WALLET }, signer, Date.now()));
    const kept: string[] = [];
    // Refused (what statusError keeps), a 2xx the schema refuses (badResponse), a 2xx applied (rawText).
    for (const answer of [
      { status: 403, body: `{"error":{"code":"forbidden","message":"no"},"echo":"${unicode}"}` },
      { status: 200, body: `{"status":"success","claimed_sol":"lots","${unicode}":1}` },
    ]) {
      next = answer;
      kept.push((await apiError(send())).rawBody ?? '');
    }
    next = { status: 200, body: `{"status":"success","claimed_sol":0.5,"echo":"Bearer ${unicode}"}` };
    const applied = await send();
    expect(applied.body.claimedLamports).toBe(500_000_000n);
    kept.push(applied.rawText);
    const decoded: string[] = [];
    for (const text of kept) {
      expect(text).toContain('[REDACTED]');
      JSON.parse(text, (k: string, v: unknown) => {
        decoded.push(k, typeof v === 'string' ? v : '');
        return v;
      });
    }
    expect(leaks(QUOTED_KEY, [...kept, ...decoded])).toEqual([]);
  });

  it('nor when the body is not JSON to the strict parser but is to a lenient one (a key given twice, read last-wins)', async () => {
    const redactor = new Redactor().add(QUOTED_KEY);
    const unicode = [...QUOTED_KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    // The strict parser refuses a key given twice with two values; JSON.parse, jq and Python's json read it.
    const twice = `"twice":1,"twice":2`;
    let next: Answer = { status: 200, body: '' };
    const srv = await echoServer(() => next);
    const api = loopbackClient(srv.base, { readAttempts: 1 }, { apiKey: QUOTED_KEY, redact: (t) => redactor.redact(t) });
    const kept: string[] = [];
    for (const answer of [
      { status: 200, body: `{"status":"success","echo":"Bearer ${unicode}",${twice}}` },
      { status: 500, body: `{"error":"boom","echo":"${unicode}",${twice}}` },
    ]) {
      next = answer;
      kept.push((await apiError(api.send(api.prepare({ op: 'claim', wallet: WALLET }, signer, Date.now())))).rawBody ?? '');
    }
    const decoded: string[] = [];
    for (const text of kept) {
      JSON.parse(text, (k: string, v: unknown) => {
        decoded.push(k, typeof v === 'string' ? v : '');
        return v;
      });
    }
    expect(leaks(QUOTED_KEY, [...kept, ...decoded])).toEqual([]);
  });

  it('the server message of a refusal that is not JSON to the strict parser quotes no secret in \\u escapes', async () => {
    const redactor = new Redactor().add(PLAIN_KEY);
    const unicode = [...PLAIN_KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const srv = await echoServer(() => ({ status: 403, body: `{"error":"bad key ${unicode}","b":1,"b":2}` }));
    const api = loopbackClient(srv.base, { readAttempts: 1 }, { apiKey: PLAIN_KEY, redact: (t) => redactor.redact(t) });
    const err = await apiError(api.send(api.prepare({ op: 'claim', wallet: WALLET }, signer, Date.now())));
    // What the log line, the step's error and every notice quote: spelled out, it would be the key.
    const spelled = (text: string | undefined) => (text ?? '').replace(/\\u([0-9a-f]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    expect(err.serverMessage).toContain('[REDACTED]');
    expect(leaks(PLAIN_KEY, [err.message, err.serverMessage].map(spelled))).toEqual([]);
  });

  it("the parser's own words about a body it refuses quote no piece of a long key it decoded (a key given twice)", async () => {
    const key = `${PLAIN_KEY}-${'9aZ'.repeat(15)}`; // 75 characters: longer than the quote of the parser's words
    const redactor = new Redactor().add(key);
    const unicode = [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const srv = await echoServer(() => ({ status: 200, body: `{"address":"${WALLET}","${unicode}":1,"${unicode}":2}` }));
    const api = loopbackClient(srv.base, { readAttempts: 1 }, { apiKey: key, redact: (t) => redactor.redact(t) });
    const err = await apiError(api.walletSummary(WALLET));
    expect(err.issues[0]).toMatch(/^body: not valid JSON \(Duplicate key '\[REDACTED\]'/);
    expect(leaks(key, errorText(err))).toEqual([]);
  });

  it('a secret in the base URL never reaches the error of a refused answer', async () => {
    const redactor = new Redactor().add(PLAIN_KEY);
    let body = '';
    const srv = await echoServer(() => ({ status: 200, body }));
    const api = loopbackClient(`${srv.base}/t/${PLAIN_KEY}`, { readAttempts: 1 }, { redact: (t) => redactor.redact(t) });
    for (body of ['not json', `{"address":"${WALLET}","epoch":"2025-06-01","pending_sol":"lots"}`]) {
      const err = await apiError(api.walletSummary(WALLET));
      expect(err.code).toBe('BAD_RESPONSE');
      expect(err.url).toContain('/t/[REDACTED]/rewards/wallet/');
      expect(leaks(PLAIN_KEY, errorText(err))).toEqual([]);
    }
  });

  it('a body over max_response_bytes cut through the key keeps no piece of it', async () => {
    const key = PLAIN_KEY;
    const redactor = new Redactor().add(key);
    const found: string[] = [];
    for (let at = 4_080; at <= 4_100; at += 1) {
      const body = `${'x'.repeat(at)}Bearer ${key}${'y'.repeat(5_000)}`;
      const srv = await loopback((_req, res) => {
        res.writeHead(403, { 'content-type': 'text/plain' }); // chunked: nothing to refuse up front
        res.write(body.slice(0, at + 10));
        setTimeout(() => res.end(body.slice(at + 10)), 5);
      });
      const api = loopbackClient(srv.base, { maxResponseBytes: 4_096, readAttempts: 1 }, { apiKey: key, redact: (t) => redactor.redact(t) });
      const err = await apiError(api.send(api.prepare({ op: 'claim', wallet: WALLET }, signer, Date.now())));
      expect(err.code).toBe('RESPONSE_TOO_LARGE');
      found.push(...leaks(key, errorText(err)));
    }
    expect(found).toEqual([]);
  });
});

describe('ApiError carries the server code and a bounded, scrubbed message', () => {
  it('from error.code / error.message, from top-level code / message, and from a text body', async () => {
    const answers: Array<{ body: string; code: string | undefined; message: string | undefined }> = [
      { body: '{"error":{"code":"insufficient_pending","message":"nothing to claim"}}', code: 'insufficient_pending', message: 'nothing to claim' },
      { body: '{"code":"E42","message":"wallet\\nlocked"}', code: 'E42', message: 'wallet locked' },
      { body: '{"error":"plain string error"}', code: undefined, message: 'plain string error' },
      { body: '<html><body>Forbidden</body></html>', code: undefined, message: '<html><body>Forbidden</body></html>' },
      { body: '', code: undefined, message: undefined },
      { body: '{"ok":false}', code: undefined, message: undefined },
    ];
    let i = 0;
    const srv = await echoServer(() => ({ status: 403, body: answers[i]?.body ?? '' }));
    const api = loopbackClient(srv.base, { readAttempts: 1 });
    for (; i < answers.length; i += 1) {
      const err = await apiError(api.walletSummary(WALLET));
      expect({ code: err.serverCode, message: err.serverMessage }, answers[i]?.body).toEqual({ code: answers[i]?.code, message: answers[i]?.message });
      expect(err.disposition).toBe('refused');
    }
  });

  it('bounds a long message to about 200 characters on one line', async () => {
    const srv = await echoServer(() => ({ status: 400, body: JSON.stringify({ error: { code: 'x'.repeat(500), message: `line1\n${'m'.repeat(1_000)}` } }) }));
    const api = loopbackClient(srv.base, { readAttempts: 1 });
    const err = await apiError(api.walletSummary(WALLET));
    expect(err.serverMessage?.length).toBeLessThanOrEqual(203);
    expect(err.serverMessage).toMatch(/^line1 m+\.\.\.$/);
    expect(err.serverCode?.length).toBeLessThanOrEqual(67);
  });
});
