// The webhook from a running daemon (issue 13): `run` against the built-in sandbox posts a claim
// the API rejected (a sandbox fault), then a SIGHUP with a broken config posts config.invalid, every
// problem placed (file:line:col, the key problem at the wallet's key:); each POST signed with the
// secret, which a loopback receiver verifies against the exact bytes. No acknowledgement is posted
// (the default), and neither URL nor secret appears in the output.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { systemClock } from '../../src/domain.js';
import { makeWallets, tempDir } from './helpers.js';

const SECRET = 'live-webhook-secret-canary-5Hq8';

interface Event {
  event: string;
  text: string;
  details: Record<string, unknown>;
}

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

let server: Server | undefined;
let cleanup: (() => void) | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  cleanup?.();
  cleanup = undefined;
});

function verifies(headers: IncomingHttpHeaders, raw: string): boolean {
  const ts = headers['x-autoclaim-timestamp'];
  const sig = headers['x-autoclaim-signature'];
  if (typeof ts !== 'string' || typeof sig !== 'string') return false;
  const expected = createHmac('sha256', SECRET).update(`${ts}.${raw}`).digest();
  const given = Buffer.from(sig.replace(/^sha256=/, ''), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function until(cond: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the webhook of a running daemon', () => {
  it('posts a rejected step and an invalid reload, signed, and no acknowledgement', async () => {
    const events: Event[] = [];
    let unsigned = 0;
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        if (!verifies(req.headers, raw)) unsigned++;
        events.push(...(JSON.parse(raw) as { events: Event[] }).events);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/T0KEN-live`;

    const t = tempDir();
    cleanup = t.cleanup;
    const dir = t.dir;
    const [alpha, beta] = makeWallets(dir, ['alpha', 'beta']);
    // Started with a threshold nothing reaches; once the sandbox is told to reject claims, a reload
    // lowers it (the sandbox starts the first wallet at 0.08 SOL pending).
    const yaml = (keyOfBeta: string, threshold = '0.001', poll = '*/1 * * * * *') => `api:
  base_url: sandbox
state:
  path: ./state/autoclaim.db
schedule:
  poll: "${poll}"
  jitter: 0s
wallets:
  - name: alpha
    address: ${alpha?.address}
    key: { file: ./keys/alpha.json }
  - name: beta
    address: ${beta?.address}
    key: { file: ${keyOfBeta} }
rules:
  - name: sweep
    when:
      pending_sol: { gte: ${threshold} }
    do: [claim]
safety:
  max_sol_per_action: 100
sandbox:
  epoch: 1d
`;
    const configPath = join(dir, 'autoclaim.yaml');
    writeFileSync(configPath, yaml('./keys/beta.json', '1000'));

    const signals = new EventEmitter();
    const stdout = new Capture();
    const stderr = new Capture();
    const exit = main(['run', '--config', configPath], {
      env: { AUTOCLAIM_WEBHOOK_URL: url, AUTOCLAIM_WEBHOOK_SECRET: SECRET },
      cwd: dir,
      stdout,
      stderr,
      clock: systemClock,
      signals,
    });
    try {
      // daemon.started, not sandbox.started: the sandbox is up before `run` listens for SIGHUP, and a
      // SIGHUP emitted in between reached no listener (the reload never came; seen at load ~10).
      await until(() => /"event":"daemon.started"/.test(stdout.text), 'the daemon started');
      const sandbox = /"url":"(http:\/\/127\.0\.0\.1:\d+)\/v1"/.exec(stdout.text)?.[1];
      const queued = await fetch(`${sandbox}/__sandbox/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ kind: 'malformed', body: '{"status":"rejected","error":{"code":"not_eligible"}}', status: 200, match: { op: 'claim' }, times: 100 }),
      });
      expect(queued.status).toBe(201);
      writeFileSync(configPath, yaml('./keys/beta.json'));
      signals.emit('SIGHUP');
      await until(() => events.some((e) => e.event === 'action.rejected'), 'the rejected claim on the webhook');

      // A broken reload: a cron step that does not divide, and a key file that is not there.
      writeFileSync(configPath, yaml('./keys/beta-typo.json', '0.001', '*/70 * * * *'));
      signals.emit('SIGHUP');
      await until(() => events.some((e) => e.event === 'config.invalid'), 'config.invalid on the webhook');
    } finally {
      signals.emit('SIGTERM');
      expect(await exit).toBe(0);
    }

    const invalid = events.find((e) => e.event === 'config.invalid');
    expect(invalid?.text).toContain(`${configPath}:6:3 schedule.poll: "*/70" in the minute field`);
    expect(invalid?.text).toContain(`${configPath}:14:5 wallets[1].key: wallet beta: key file ${join(dir, 'keys', 'beta-typo.json')} does not exist`);
    expect(events.filter((e) => e.event === 'action.rejected').map((e) => e.details['category'])).toContain('rejected');
    expect(events.map((e) => e.event)).not.toContain('action.acknowledged');
    expect(unsigned).toBe(0);
    expect(stdout.text + stderr.text).not.toContain('T0KEN-live');
    expect(stdout.text + stderr.text).not.toContain(SECRET);
  }, 30_000);
});
