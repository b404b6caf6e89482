// E-mail: one message a batch over SMTP (nodemailer), always upgraded with STARTTLS (requireTLS: a
// server that does not offer it is refused, so neither the password nor the notices cross in
// clear), the server's certificate checked against the system CAs or ca_file. Plain text, one
// block a notice: the title, the sentence, then `Label: value` lines. nodemailer is loaded at the
// first send, so a daemon without an e-mail channel never loads it.
import { readFileSync } from 'node:fs';
import type { Clock } from '../../domain.js';
import { systemClock } from '../../domain.js';
import { toJson } from '../../json.js';
import { lazyRequire } from '../../lazy-require.js';
import type { KeptNotice, NoticeChannel, SendResult } from '../outbox.js';
import { clip, factsOf } from './facts.js';
import { reason } from './http.js';

type Nodemailer = typeof import('nodemailer');
const nodemailer = lazyRequire<Nodemailer>('nodemailer');

export const EMAIL_MAX_BATCH = 20;

export interface EmailOptions {
  name?: string;
  host: string;
  port: number;
  from: string;
  to: readonly string[];
  username?: string | undefined;
  password?: string | undefined;
  caFile?: string | undefined;
  clock?: Clock;
  timeoutMs?: number;
}

export function emailChannel(opts: EmailOptions): NoticeChannel {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const clock = opts.clock ?? systemClock;
  const ca = opts.caFile === undefined ? undefined : readFileSync(opts.caFile, 'utf8');
  return {
    name: opts.name ?? 'email',
    host: `${opts.host}:${opts.port}`,
    format: (batch) => toJson(emailMessage(batch)),
    async send(body, signal): Promise<SendResult> {
      const message = JSON.parse(body) as { subject: string; text: string };
      const transport = nodemailer().createTransport({
        host: opts.host,
        port: opts.port,
        secure: false,
        requireTLS: true,
        ...(opts.username === undefined ? {} : { auth: { user: opts.username, pass: opts.password ?? '' } }),
        tls: { minVersion: 'TLSv1.2', ...(ca === undefined ? {} : { ca }) },
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
        disableFileAccess: true,
        disableUrlAccess: true,
      });
      let onAbort: (() => void) | undefined;
      const aborted = new Promise<SendResult>((resolve) => {
        onAbort = () => resolve({ ok: false, error: reason(signal.reason) });
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      });
      const sent = transport
        .sendMail({ from: opts.from, to: [...opts.to], subject: message.subject, text: message.text, date: new Date(clock.now()) })
        .then((): SendResult => ({ ok: true, status: 250 }))
        .catch((err: unknown): SendResult => {
          const code = (err as { responseCode?: unknown }).responseCode;
          return { ok: false, status: typeof code === 'number' ? code : undefined, error: err instanceof Error ? err.message : String(err) };
        });
      try {
        return await Promise.race([sent, aborted]);
      } finally {
        if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
        transport.close();
      }
    },
  };
}

export function emailMessage(batch: readonly KeptNotice[]): { subject: string; text: string } {
  const facts = batch.map((n) => ({ n, f: factsOf(n) }));
  const first = facts[0];
  const subject = first === undefined ? 'autoclaim' : `[autoclaim] ${first.f.title}${facts.length > 1 ? ` (+${facts.length - 1} more)` : ''}`;
  const blocks = facts.map(({ n, f }) => [f.title, n.text, '', ...f.fields.map(([label, value]) => `${label}: ${value}`), `At: ${new Date(n.at).toISOString()}`].join('\n'));
  return { subject: clip(subject.replace(/[\r\n]+/g, ' '), 200), text: blocks.join('\n\n----\n\n') };
}
