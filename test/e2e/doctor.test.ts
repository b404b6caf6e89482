// `doctor` end to end: against the sandbox (all well, the three signed requests shown and not
// sent, the API key never printed), a closed port, a server whose Date is 10 minutes off, a
// sandbox that verifies claims with another template, and a wallet whose key is someone else's.
import { copyFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { closedPort } from '../support/net.js';
import { CANARY_API_KEY, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

/** Every 10-character piece of the API key: none may appear anywhere in what doctor printed. */
function expectNoPieceOfKey(text: string): void {
  for (let i = 0; i + 10 <= CANARY_API_KEY.length; i++) expect(text).not.toContain(CANARY_API_KEY.slice(i, i + 10));
}

describe('doctor', () => {
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  const stops: Array<() => Promise<void>> = [];

  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['alpha', 'beta']);
  });
  afterEach(async () => {
    for (const s of stops.splice(0).reverse()) await s();
    cleanup();
  });

  async function sandbox(opts: Parameters<typeof startSandbox>[0] = {}): Promise<Sandbox> {
    const s = await startSandbox({ apiKey: CANARY_API_KEY, ...opts });
    stops.push(() => s.close());
    return s;
  }

  it('against the sandbox: exit 0, the three signed requests shown, the API key never printed', async () => {
    const config = writeConfig(dir, { baseUrl: 'sandbox', wallets });
    const r = await runCli(['doctor', '--config', config], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/GET \/health: HTTP 200/);
    expect(r.stdout).toContain(`wallet alpha: its key derives ${wallets[0]!.address}`);
    for (const [op, path] of [
      ['claim', '/rewards/claim'],
      ['deposit', '/actions/deposit'],
      ['mint', '/actions/mint'],
    ]) {
      expect(r.stdout).toMatch(new RegExp(`\\n  ${op}\\n    POST http://127\\.0\\.0\\.1:\\d+/v1${path}\\n    authorization: Bearer \\[REDACTED\\]\\n`));
    }
    expect(r.stdout).toMatch(new RegExp(`signed message: ${wallets[0]!.address}\\|SOL2X\\|0\\.000000001\\|\\d+\\n`));
    expect(r.stdout).toMatch(/doctor: all well/);
    expectNoPieceOfKey(r.stdout + r.stderr);
  });

  it('--json prints one JSON object', async () => {
    const config = writeConfig(dir, { baseUrl: 'sandbox', wallets });
    const r = await runCli(['doctor', '--json', '--config', config], { cwd: dir });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { ok: boolean; requests: Array<{ op: string; sent: boolean; headers: Record<string, string> }>; wallets: unknown[] };
    expect(report.ok).toBe(true);
    expect(report.wallets).toHaveLength(2);
    // claim, deposit and mint, then any other operation the config signs (withdraw, burn).
    expect(report.requests.map((q) => q.op).slice(0, 3)).toEqual(['claim', 'deposit', 'mint']);
    for (const q of report.requests) expect([q.sent, q.headers['authorization']]).toEqual([false, 'Bearer [REDACTED]']);
    expectNoPieceOfKey(r.stdout + r.stderr);
  });

  it('sends no signed request: the sandbox sees GETs only', async () => {
    const s = await sandbox();
    const config = writeConfig(dir, { baseUrl: s.url, wallets });
    // The default prefix against a URL is a warning (exit 1) unless accepted.
    expect((await runCli(['doctor', '--config', config], { cwd: dir })).code).toBe(1);
    const r = await runCli(['doctor', '--accept-defaults', '--config', config], { cwd: dir });
    expect(r.code).toBe(0);
    const ops = Object.keys(s.stats().byOp);
    expect(ops.sort()).toEqual(['health', 'summary']);
    expect(s.ledger()).toEqual([]);
  });

  it('against a closed port: exit 1 and a clear "cannot reach" line', async () => {
    const base = `http://127.0.0.1:${await closedPort()}/v1`;
    const config = writeConfig(dir, { baseUrl: base, wallets });
    const r = await runCli(['doctor', '--config', config], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`  - cannot reach ${base}: connection refused; check api.base_url`);
    // The requests are still shown: they need no network.
    expect(r.stdout).toMatch(/\n {2}claim\n {4}POST /);
  });

  it('against a server whose Date is 10 minutes ahead: exit 1 and a clock skew line', async () => {
    const methods: string[] = [];
    const srv = http.createServer((req, res) => {
      methods.push(`${req.method} ${req.url}`);
      res.setHeader('date', new Date(Date.now() + 600_000).toUTCString());
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-request-id', 'req-skew-1');
      const wallet = /^\/v1\/rewards\/wallet\/(\w+)$/.exec(req.url ?? '')?.[1];
      if (req.url === '/v1/health') res.end('{"status":"ok","network":"solana-mainnet","ts":1}');
      else if (wallet !== undefined) res.end(`{"address":"${wallet}","epoch":"2025-10-31","pending_sol":0.30000000000000004,"rank":0,"tier":"Gold"}`);
      else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    stops.push(async () => {
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    });
    const base = `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}/v1`;
    const config = writeConfig(dir, { baseUrl: base, wallets });
    const r = await runCli(['doctor', '--accept-defaults', '--config', config], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/ {2}- this machine's clock is about 10m behind the server's \(its Date header\); .*sync the clock/);
    expect(r.stdout.match(/^ {2}- /gm)).toHaveLength(1);
    expect(r.stdout).toContain('wallet alpha: rank 0, read as unranked');
    expect(r.stdout).toContain('wallet alpha: pending_sol written as 0.30000000000000004, read as 0.3 SOL');
    expect(r.stdout).toContain('tiers seen: Gold');
    expect(r.stdout).toContain('e.g. req-skew-1');
    expect(methods.every((m) => m.startsWith('GET '))).toBe(true);
  });

  it('against a sandbox that checks claims with another template: shows the template and says it must be confirmed', async () => {
    const s = await sandbox({ claimMessage: '{wallet}|{ts}|{epoch}' });
    const config = writeConfig(dir, { baseUrl: s.url, wallets });
    const r = await runCli(['doctor', '--config', config], { cwd: dir });
    // doctor cannot know without sending a claim: it says what it signs and that only the service can confirm it.
    expect(r.stdout).toMatch(/\n {2}claim\n(?: {4}.*\n)*? {4}template: +\{wallet\}\|\{ts\}\n/);
    expect(r.stdout).toMatch(/note: the service does not publish the claim message: confirm this template with the service/);
    expect(Object.keys(s.stats().byOp)).not.toContain('claim');
  });

  it('exits 1 for a wallet whose key does not derive its address, naming what to change', async () => {
    copyFileSync(wallets[0]!.keyFile, wallets[1]!.keyFile);
    const config = writeConfig(dir, { baseUrl: 'sandbox', wallets });
    const r = await runCli(['doctor', '--config', config], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(`  - wallet beta: key file \\S+beta\\.json is the key of address ${wallets[0]!.address}, but wallet beta is configured with address ${wallets[1]!.address}; point wallet beta at its own key, or correct its address`),
    );
    expect(r.stdout.match(/^ {2}- /gm)).toHaveLength(1);
  });
});
