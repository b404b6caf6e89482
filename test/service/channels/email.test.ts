// E-mail (issue 27): a real SMTP server (smtp-server) on loopback with a test certificate: the
// channel upgrades with STARTTLS before it logs in (and refuses a server that does not offer it),
// authenticates, and sends one plain-text message a batch whose subject and body carry the facts;
// min_severity honoured; the resolve told; neither the password nor the canary in what is sent or
// logged.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterEach, describe, expect, it } from 'vitest';
import type { FailureWebhook } from '../../../src/service/webhook-events.js';
import { CANARY, channel, notifierFor, sendTheNotices, TX, RUNBOOK } from './support.js';

const TLS_DIR = join(import.meta.dirname, 'tls');
const PASSWORD = 'smtp-password-canary-4e7d1b';

interface Mail {
  from: string | undefined;
  to: string[];
  raw: string;
  secure: boolean;
  user: string | undefined;
}

let hook: FailureWebhook | undefined;
const servers: SMTPServer[] = [];
afterEach(async () => {
  await hook?.close(1000);
  hook = undefined;
  for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()));
});

async function smtp(opts: { starttls?: boolean; authMethods?: string[]; echoAuth?: boolean } = {}): Promise<{ port: number; mails: Mail[]; auths: string[]; waitUntil(done: () => boolean): Promise<void> }> {
  const mails: Mail[] = [];
  const auths: string[] = [];
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    key: readFileSync(join(TLS_DIR, 'smtp-test.key')),
    cert: readFileSync(join(TLS_DIR, 'smtp-test.crt')),
    disabledCommands: opts.starttls === false ? ['STARTTLS'] : [],
    // AUTH over a plain connection stays refused (smtp-server's default): the client must upgrade first.
    allowInsecureAuth: false,
    logger: false,
    ...(opts.authMethods === undefined ? {} : { authMethods: opts.authMethods }),
    onAuth(auth, session, cb) {
      auths.push(`${auth.username}:${session.secure}`);
      // A server quoting what it was sent, as the client's wire has it (base64: AUTH PLAIN's
      // \0user\0password, AUTH LOGIN's password line), in its refusal.
      const wire = auth.method === 'PLAIN' ? `\0${auth.username ?? ''}\0${auth.password ?? ''}` : (auth.password ?? '');
      if (opts.echoAuth === true) return cb(new Error(`535 refused ${Buffer.from(wire, 'utf8').toString('base64')} (${auth.method})`));
      if (auth.username === 'autoclaim' && auth.password === PASSWORD) cb(null, { user: auth.username });
      else cb(new Error('invalid login'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        mails.push({
          from: from === false ? undefined : from.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        cb();
        for (const w of waiters.splice(0)) w();
      });
    },
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, mails, auths, waitUntil: async (done) => { while (!done()) await new Promise<void>((r) => waiters.push(r)); } };
}

/** The message's text as a reader sees it: quoted-printable and encoded words undone. */
function decoded(raw: string): { subject: string; body: string } {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const unfolded = head.replace(/\r\n[ \t]+/g, ' ');
  const subjectLine = /^Subject: (.*)$/m.exec(unfolded)?.[1] ?? '';
  const subject = subjectLine.replace(/=\?UTF-8\?([QB])\?([^?]*)\?=\s*/gi, (_m, enc: string, text: string) =>
    enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : qp(text.replace(/_/g, ' ')),
  );
  const body = /Content-Transfer-Encoding: quoted-printable/i.test(head) ? qp(rest.join('\r\n\r\n')) : rest.join('\r\n\r\n');
  return { subject, body: body.replace(/\r\n/g, '\n') };
}

function qp(s: string): string {
  const bytes: number[] = [];
  const text = s.replace(/=\r?\n/g, '');
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '=' && /^[0-9A-F]{2}$/i.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(...Buffer.from(text[i] ?? '', 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function emailChannel(port: number) {
  return channel('email', { host: '127.0.0.1', port, from: 'autoclaim@example.test', to: ['ops@example.test', 'oncall@example.test'], username: 'autoclaim', password: { env: 'SMTP_PASSWORD' }, caFile: join(TLS_DIR, 'smtp-test.crt') });
}

describe('the email channel', () => {
  it('sends over STARTTLS, logged in, one plain-text message a batch with the facts; severity filtered, resolve told, nothing secret', async () => {
    const s = await smtp();
    const made = notifierFor(emailChannel(s.port), { SMTP_PASSWORD: PASSWORD });
    hook = made.hook;
    sendTheNotices(hook);
    await s.waitUntil(() => s.mails.some((m) => decoded(m.raw).body.includes('RESOLVED')));
    for (const m of s.mails) {
      expect(m.secure).toBe(true);
      expect(m.user).toBe('autoclaim');
      expect(m.from).toBe('autoclaim@example.test');
      expect(m.to).toEqual(['ops@example.test', 'oncall@example.test']);
      expect(m.raw).not.toContain(CANARY);
      expect(m.raw).not.toContain(PASSWORD);
      expect(m.raw).toMatch(/^Content-Type: text\/plain; charset=utf-8$/im);
    }
    expect(s.auths.every((a) => a.endsWith(':true'))).toBe(true);
    const first = decoded(s.mails[0]?.raw ?? '');
    // Queued together, the three go in one message, named by the first.
    expect(first.subject).toBe('[autoclaim] ERROR · action.rejected · alpha (+2 more)');
    expect(first.body).toContain('wallet alpha: deposit of 1.5 SOL (SOL2X) step 3 (plan 7) was rejected: insufficient_funds "balance too low for key [REDACTED]" (HTTP 422, request id req-81f2)');
    expect(first.body).toContain(`Amount (SOL): 1.5\nSymbol: SOL2X\nTx: ${TX}\nError code: insufficient_funds\nServer message: balance too low for key [REDACTED]\nHTTP status: 422\nRequest id: req-81f2`);
    expect(first.body).toContain(`Instance: host-a/4242\nRunbook: ${RUNBOOK}\n`);
    expect(first.body).toContain('Host: host-a\nInstance: host-a/4242');
    // The anomaly (a warning) is below min_severity error; the alert's opening and its end follow.
    const all = s.mails.map((m) => decoded(m.raw));
    expect(all.map((m) => m.body).join('\n')).not.toContain('action.anomaly');
    expect(all.map((m) => m.body).join('\n')).toContain('RESOLVED · alert.closed · alpha\nwallet alpha: polling again');
    expect(JSON.stringify(made.log.lines)).not.toContain(PASSWORD);
  });

  it('a server quoting the AUTH PLAIN or AUTH LOGIN line it got (base64 of the password) in its refusal: the log carries neither', async () => {
    for (const method of ['PLAIN', 'LOGIN']) {
      const s = await smtp({ authMethods: [method], echoAuth: true });
      const made = notifierFor(emailChannel(s.port), { SMTP_PASSWORD: PASSWORD }, { retryBaseMs: 600_000 });
      hook = made.hook;
      hook.onStep({ kind: 'claim', wallet: 'w', plan: 1, step: 1, state: 'failed' });
      for (let i = 0; i < 250 && made.log.events('notify.webhook_failed').length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      const text = JSON.stringify(made.log.lines);
      expect(text, text).toContain(`refused [REDACTED] (${method})`);
      for (const wire of [`\0autoclaim\0${PASSWORD}`, PASSWORD]) expect(text).not.toContain(Buffer.from(wire).toString('base64'));
      await hook.close(1000);
      hook = undefined;
    }
  });

  it('refuses a server that does not offer STARTTLS: nothing sent, the password never offered, the notice kept for a retry', async () => {
    const s = await smtp({ starttls: false });
    const made = notifierFor(emailChannel(s.port), { SMTP_PASSWORD: PASSWORD }, { retryBaseMs: 600_000 });
    hook = made.hook;
    hook.onStep({ kind: 'claim', wallet: 'w', plan: 1, step: 1, state: 'failed' });
    for (let i = 0; i < 200 && made.log.events('notify.webhook_failed').length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(made.log.events('notify.webhook_failed')[0]).toMatchObject({ channel: 'email' });
    expect(s.mails).toHaveLength(0);
    expect(s.auths).toHaveLength(0);
  });
});
