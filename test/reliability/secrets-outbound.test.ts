// Everything that leaves the process (issue 24 finding 1), beyond the log lines secrets.test.ts
// searches: a running daemon with a webhook and a metrics listener gets a SIGHUP whose config has
// secrets pasted into it — the API key as a key name, a wallet's 64-byte secret (base58) as a key
// name and as a value, its seed (hex) as a value, the webhook secret as a value, and a NEW wallet's
// secret (never loaded, so never registered with the redactor) as a key name and its seed as a
// value, and the API key and webhook secret in a key file's path (which an issue quotes). The reload is refused; the canary secrets are then searched for in every webhook body the
// receiver got, the /metrics and /readyz answers, the state file, the log, and `check` and `doctor`
// output on the same config. Then: a webhook URL autoclaim must refuse stops `check` and `run` with
// 78, naming where it came from and not the URL; and a receiver that never answers does not stop
// the daemon's cycles.
import { EventEmitter } from 'node:events';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import bs58 from 'bs58';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/keys/signer.js';
import { main } from '../../src/cli/program.js';
import { systemClock } from '../../src/domain.js';
import { CANARY_API_KEY, makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';

const WEBHOOK_SECRET = 'whsec-outbound-canary-4Rt7Yu1Io9';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

const servers: Server[] = [];
const cleanups: Array<() => void> = [];

beforeEach(async () => {
  metricsPort = await freePort();
});

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  for (const c of cleanups.splice(0)) c();
});

async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A receiver on 127.0.0.1 recording raw bodies; `answer` false = never answers. */
async function receiver(answer = true): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      if (answer) res.writeHead(204).end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/T0KEN-outbound`, bodies };
}

/** A port free a moment ago, for metrics.listen (which takes no port 0). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

let metricsPort = 0;

function yaml(alpha: TestWallet, extra = ''): string {
  return `api:
  base_url: sandbox
state:
  path: ./state/autoclaim.db
schedule:
  poll: "*/1 * * * * *"
  jitter: 0s
metrics:
  listen: 127.0.0.1:${metricsPort}
wallets:
  - name: alpha
    address: ${alpha.address}
    key: { file: ./keys/alpha.json }
rules:
  - name: sweep
    when:
      pending_sol: { gte: 50 }
    do: [claim]
safety:
  max_sol_per_action: 100
sandbox:
  epoch: 1d
${extra}`;
}

/** Every printable form of a 64-byte secret and its seed. */
function encodings(secret64: Uint8Array): string[] {
  const out: string[] = [];
  for (const bytes of [secret64, secret64.subarray(0, 32)]) {
    const b = Buffer.from(bytes);
    out.push(bs58.encode(bytes), b.toString('hex'), b.toString('base64'), [...bytes].join(','));
  }
  return out;
}

async function cli(argv: string[], dir: string, env: NodeJS.ProcessEnv, signals = new EventEmitter()): Promise<{ code: number; out: string; stdout: Capture }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(argv, { env, cwd: dir, stdout, stderr, clock: systemClock, signals });
  return { code, out: stdout.text + stderr.text, stdout };
}

describe('what leaves the process', () => {
  it('a reload refused for pasted secrets: webhook bodies, metrics, readyz, state, log, check and doctor carry none of them', async () => {
    const hook = await receiver();
    const t = tempDir('autoclaim-outbound-');
    cleanups.push(t.cleanup);
    const dir = t.dir;
    const [alpha] = makeWallets(dir, ['alpha']) as [TestWallet];
    const stranger = generateKeypair().secretKey64; // never loaded: unknown to the redactor
    const alphaB58 = bs58.encode(alpha.secretKey64);
    const alphaSeedHex = Buffer.from(alpha.secretKey64.subarray(0, 32)).toString('hex');
    const strangerB58 = bs58.encode(stranger);
    const strangerSeedHex = Buffer.from(stranger.subarray(0, 32)).toString('hex');
    const configPath = join(dir, 'autoclaim.yaml');
    writeFileSync(configPath, yaml(alpha));
    const env = { AUTOCLAIM_API_KEY: CANARY_API_KEY, AUTOCLAIM_WEBHOOK_URL: hook.url, AUTOCLAIM_WEBHOOK_SECRET: WEBHOOK_SECRET };

    const signals = new EventEmitter();
    const stdout = new Capture();
    const stderr = new Capture();
    const exit = main(['run', '--config', configPath], { env, cwd: dir, stdout, stderr, clock: systemClock, signals });
    const streams: Array<{ what: string; text: string }> = [];
    let metricsUrl = '';
    try {
      await until(() => /"event":"health.listening"/.test(stdout.text), 'the metrics listener');
      metricsUrl = /"event":"health.listening","url":"([^"]+)"/.exec(stdout.text)?.[1] ?? '';
      // The exact finding: secrets pasted as key names and as values.
      // And the API key and webhook secret in a value an issue does quote: a key file's path.
      const pasted = yaml(
        { ...alpha, address: alpha.address },
        `${CANARY_API_KEY}: 1
${alphaB58}: 1
${strangerB58}: 1
notes:
  seed: ${alphaSeedHex}
  password: ${WEBHOOK_SECRET}
  other: ${strangerSeedHex}
  key: ${alphaB58}
`,
      );
      writeFileSync(configPath, pasted.replace('{ file: ./keys/alpha.json }', `{ file: ./keys/${CANARY_API_KEY}.${WEBHOOK_SECRET}.json }`));
      signals.emit('SIGHUP');
      await until(() => hook.bodies.some((b) => b.includes('config.invalid')), 'config.invalid on the webhook');
      for (const path of ['/metrics', '/readyz']) streams.push({ what: `GET ${path}`, text: await (await fetch(`${metricsUrl}${path}`)).text() });
      const check = await cli(['check', '--config', configPath], dir, env);
      expect(check.code).toBe(78);
      streams.push({ what: 'check', text: check.out });
    } finally {
      signals.emit('SIGTERM');
      expect(await exit).toBe(0);
    }
    // doctor on the running config (the bad one is refused before doctor does anything).
    writeFileSync(configPath, yaml(alpha));
    const doctor = await cli(['doctor', '--config', configPath], dir, env);
    streams.push({ what: 'doctor', text: doctor.out });
    streams.push({ what: 'daemon log', text: stdout.text + stderr.text });
    for (const [i, body] of hook.bodies.entries()) streams.push({ what: `webhook body ${i}`, text: body });
    for (const name of readdirSync(join(dir, 'state'))) streams.push({ what: `state ${name}`, text: readFileSync(join(dir, 'state', name)).toString('latin1') });

    const secrets = [
      { what: 'API key', value: CANARY_API_KEY },
      { what: 'webhook secret', value: WEBHOOK_SECRET },
      { what: 'webhook URL token', value: 'T0KEN-outbound' },
      ...encodings(alpha.secretKey64).map((value) => ({ what: 'alpha key material', value })),
      ...encodings(stranger).map((value) => ({ what: 'unregistered key material', value })),
    ];
    const found = streams.flatMap((s) => secrets.filter((x) => s.text.includes(x.value)).map((x) => `${x.what} in ${s.what}`));
    expect(found).toEqual([]);
    // The reload's issues did reach the webhook, each placed, with the pasted names hidden or scrubbed.
    const invalid = hook.bodies.find((b) => b.includes('config.invalid')) ?? '';
    expect(invalid).toMatch(/looks like a secret/);
    // The key file's path holds them: not shown at all (shownPath), registered or not.
    expect(invalid).toMatch(/wallets\[0\]\.key: wallet alpha: key file \(a name that reads as a secret, not shown\) does not exist/);
    expect(streams.find((s) => s.what === 'GET /metrics')?.text).toContain('autoclaim_notifications_total');
  }, 60_000);

  it('a webhook URL autoclaim must not post to stops check and run with 78, naming its source, never the URL', async () => {
    const t = tempDir('autoclaim-outbound-url-');
    cleanups.push(t.cleanup);
    const [alpha] = makeWallets(t.dir, ['alpha']) as [TestWallet];
    const configPath = join(t.dir, 'autoclaim.yaml');
    writeFileSync(configPath, yaml(alpha));
    for (const url of ['not a url', 'file:///etc/passwd', 'http://hooks.example.net/T0KEN-x', 'https://169.254.169.254/T0KEN-y']) {
      for (const command of ['check', 'once']) {
        const r = await cli([command, '--config', configPath], t.dir, { AUTOCLAIM_WEBHOOK_URL: url });
        expect(r.code, `${command} ${url}`).toBe(78);
        expect(r.out).toContain('the webhook URL from $AUTOCLAIM_WEBHOOK_URL');
        expect(r.out).not.toContain(url);
        expect(r.out).not.toContain('T0KEN');
      }
    }
    // Allowed explicitly: the metadata address passes the check.
    writeFileSync(configPath, yaml(alpha, 'alerts:\n  webhook:\n    allow_link_local: true\n'));
    expect((await cli(['check', '--config', configPath], t.dir, { AUTOCLAIM_WEBHOOK_URL: 'https://169.254.169.254/hook' })).code).toBe(0);
  }, 60_000);

  it('a receiver that never answers does not hold the daemon: cycles go on, and it stops in bounded time', async () => {
    const hook = await receiver(false);
    const t = tempDir('autoclaim-outbound-hang-');
    cleanups.push(t.cleanup);
    const [alpha] = makeWallets(t.dir, ['alpha']) as [TestWallet];
    const configPath = join(t.dir, 'autoclaim.yaml');
    writeFileSync(configPath, yaml(alpha));
    const signals = new EventEmitter();
    const stdout = new Capture();
    const exit = main(['run', '--config', configPath], { env: { AUTOCLAIM_WEBHOOK_URL: hook.url }, cwd: t.dir, stdout, stderr: new Capture(), clock: systemClock, signals });
    try {
      await until(() => /"event":"health.listening"/.test(stdout.text), 'the daemon');
      // A refused reload posts a notice; the receiver takes it and never answers.
      writeFileSync(configPath, yaml(alpha).replace('poll: "*/1 * * * * *"', 'poll: "*/70 * * * *"'));
      signals.emit('SIGHUP');
      await until(() => hook.bodies.length >= 1, 'the POST that hangs');
      const polls = (): number => (stdout.text.match(/"event":"poll\.ok"/g) ?? []).length;
      const before = polls();
      await until(() => polls() >= before + 2, 'two more polls while the POST hangs');
    } finally {
      signals.emit('SIGTERM');
      expect(await exit).toBe(0);
    }
    // The notice was kept for the next start, not lost.
    expect(readdirSync(join(t.dir, 'state'))).toContain('autoclaim.db');
  }, 60_000);
});
