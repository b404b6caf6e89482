// runDoctor with its edges faked: what it asks for (GETs only, in order), what it skips when the
// service cannot be reached, and whose requests it shows when a key does not load.
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { prepareSigned } from '../../src/api/signed-request.js';
import { generateKeypair, signerFromSeed, type Signer } from '../../src/keys/signer.js';
import { runDoctor, type DoctorClient, type DoctorDeps } from '../../src/cli/commands/doctor/run.js';
import type { Headers } from '../../src/cli/commands/doctor/report.js';
import { ApiError, KeyError } from '../../src/errors.js';
import { apiConfig } from '../api/helpers.js';
import { FakeClock } from '../support/clock.js';

const a = generateKeypair();
const b = generateKeypair();
const signerA = signerFromSeed(a.secretKey64.slice(0, 32));

type Answer = { status: number; headers?: Headers; rawText?: string } | Error;

function fakeClient(baseUrl: string, answers: Record<string, Answer>, skew: number | undefined) {
  const asked: string[] = [];
  const api = apiConfig({ baseUrl });
  const client: DoctorClient = {
    baseUrl,
    probe(path, opts) {
      asked.push(`GET ${path}${opts.auth ? ' (auth)' : ''}`);
      const a = answers[path];
      if (a === undefined) return Promise.reject(new Error(`unexpected GET ${path}`));
      if (a instanceof Error) return Promise.reject(a);
      return Promise.resolve({ url: `${baseUrl}${path}`, status: a.status, headers: a.headers ?? {}, rawText: a.rawText ?? '' });
    },
    clockSkewMs: () => skew,
    prepare: (input, signer, now) => prepareSigned(api, baseUrl, input, signer, now),
  };
  return { client, asked, api };
}

const summaryOf = (address: string, extra = '') => `{"address":"${address}","epoch":"2025-10-31","pending_sol":1${extra}}`;

function deps(client: DoctorClient, over: Partial<DoctorDeps> = {}): DoctorDeps {
  const keys = new Map<string, { signer: Signer } | { error: unknown }>([
    [a.address, { signer: signerA }],
    [b.address, { signer: signerFromSeed(b.secretKey64.slice(0, 32)) }],
  ]);
  return {
    api: apiConfig({ baseUrl: client.baseUrl, headerPrefix: 'x-acme' }),
    sandbox: false,
    wallets: [
      { name: 'a', address: a.address },
      { name: 'b', address: b.address },
    ],
    client,
    apiKey: { kind: 'present', source: '$AUTOCLAIM_API_KEY' },
    keys,
    clockSkewThresholdMs: 30_000,
    clock: new FakeClock(),
    lookup: () => Promise.resolve(['192.0.2.7']),
    ...over,
  };
}

describe('runDoctor', () => {
  it('resolves the name, reads health and every summary, and shows the requests without sending them', async () => {
    const { client, asked } = fakeClient(
      'https://api.example.com/v1',
      {
        '/health': { status: 200, headers: { 'x-request-id': 'h-1', 'x-ratelimit-remaining': '499' }, rawText: '{"status":"ok"}' },
        [`/rewards/wallet/${a.address}`]: { status: 200, headers: { 'x-request-id': 's-1' }, rawText: summaryOf(a.address, ',"tier":"Gold","rank":0') },
        [`/rewards/wallet/${b.address}`]: { status: 200, headers: { 'x-ratelimit-remaining': '497' }, rawText: summaryOf(b.address, ',"tier":"Silver"') },
      },
      1_000,
    );
    const report = await runDoctor(deps(client));
    expect(asked).toEqual(['GET /health', `GET /rewards/wallet/${a.address} (auth)`, `GET /rewards/wallet/${b.address} (auth)`]);
    expect(report.findings.filter((f) => f.level === 'problem')).toEqual([]);
    const texts = report.findings.map((f) => f.text);
    expect(texts).toEqual(
      expect.arrayContaining([
        'DNS: api.example.com resolves to 192.0.2.7',
        'wallet a: rank 0, read as unranked',
        'tiers seen: Gold, Silver (rules compare tiers without regard to case)',
        `wallet a: its key derives ${a.address}`,
      ]),
    );
    expect(report.rateLimitHeaders).toEqual({ 'x-ratelimit-remaining': '497' });
    expect(report.requestIds).toEqual([
      { request: 'GET /health', id: 'h-1' },
      { request: `GET /rewards/wallet/${a.address}`, id: 's-1' },
    ]);
    expect(report.clockSkewMs).toBe(1_000);
    expect(report.requests.map((r) => r.op)).toEqual(Object.keys(DEFAULT_ENDPOINTS));
    expect(report.sample).toMatchObject({ wallet: 'a', address: a.address, symbol: 'SOL2X', amount: '0.000000001' });
  });

  it('stops at a name that does not resolve, and still checks keys and shows the requests', async () => {
    const { client, asked } = fakeClient('https://nowhere.example/v1', {}, undefined);
    const lookup = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' }));
    const report = await runDoctor(deps(client, { lookup }));
    expect(asked).toEqual([]);
    expect(report.findings[0]).toMatchObject({ level: 'problem', text: expect.stringMatching(/does not resolve \(DNS ENOTFOUND\)/) });
    expect(report.findings.some((f) => f.area === 'keys' && f.level === 'ok')).toBe(true);
    expect(report.requests).toHaveLength(Object.keys(DEFAULT_ENDPOINTS).length);
  });

  it('reads no summary when /health cannot be reached, and says so once', async () => {
    const refused = new ApiError('UNREACHABLE', 'GET http://127.0.0.1:9/v1/health : connection refused', {
      method: 'GET',
      url: 'http://127.0.0.1:9/v1/health',
      disposition: 'not_sent',
    });
    const { client, asked } = fakeClient('http://127.0.0.1:9/v1', { '/health': refused }, undefined);
    const report = await runDoctor(deps(client));
    expect(asked).toEqual(['GET /health']);
    const found = report.findings.filter((f) => f.level === 'problem').map((f) => f.text);
    expect(found).toEqual([
      'cannot reach http://127.0.0.1:9/v1: connection refused; check api.base_url (scheme, host, port) and that the service is up',
    ]);
    expect(report.findings.some((f) => f.area === 'clock')).toBe(false);
  });

  it('is a problem when the server clock is far from ours', async () => {
    const { client } = fakeClient(
      'http://127.0.0.1:1/v1',
      {
        '/health': { status: 200 },
        [`/rewards/wallet/${a.address}`]: { status: 200, rawText: summaryOf(a.address) },
        [`/rewards/wallet/${b.address}`]: { status: 200, rawText: summaryOf(b.address) },
      },
      600_000,
    );
    const report = await runDoctor(deps(client));
    expect(report.findings.filter((f) => f.level === 'problem').map((f) => f.area)).toEqual(['clock']);
  });

  it('shows the requests for the first wallet whose key loads, and reports the one that does not', async () => {
    const { client } = fakeClient('http://127.0.0.1:1/v1', { '/health': new Error('down') }, undefined);
    const mismatch = new KeyError('KEY_MISMATCH', `key file /k/a.json is the key of address ${b.address}, but wallet a is configured with address ${a.address}`);
    const keys = new Map<string, { signer: Signer } | { error: unknown }>([
      [a.address, { error: mismatch }],
      [b.address, { signer: signerFromSeed(b.secretKey64.slice(0, 32)) }],
    ]);
    const report = await runDoctor(deps(client, { keys }));
    expect(report.findings.filter((f) => f.area === 'keys' && f.level === 'problem').map((f) => f.text)).toEqual([
      `wallet a: key file /k/a.json is the key of address ${b.address}, but wallet a is configured with address ${a.address}; point wallet a at its own key, or correct its address`,
    ]);
    expect(report.sample?.wallet).toBe('b');
    expect(report.findings.map((f) => f.text)).toContain("signed requests shown for wallet b: wallet a's key does not load");
  });

  it('notes the default header prefix against a real API, not against the sandbox', async () => {
    const { client } = fakeClient('http://127.0.0.1:1/v1', { '/health': new Error('down') }, undefined);
    const withDefault = apiConfig({ baseUrl: client.baseUrl });
    const real = await runDoctor(deps(client, { api: withDefault }));
    expect(real.findings.some((f) => f.text.startsWith('api.header_prefix is x-svc'))).toBe(true);
    const sandbox = await runDoctor(deps(client, { api: withDefault, sandbox: true }));
    expect(sandbox.findings.some((f) => f.text.startsWith('api.header_prefix'))).toBe(false);
  });
});
