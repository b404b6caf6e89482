// Issue 24, finding 10: `doctor` printed a live signed request (replayed with the API key inside
// the timestamp window, it claimed 0.5 SOL), and facing `429 Retry-After: 120` it waited it out.
// Now its sample is signed with a timestamp far outside any freshness window, judged here by the
// sandbox's own verifier; a 429 stops its GETs at once, and every GET is bounded by its deadline.
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { prepareSigned } from '../../src/api/signed-request.js';
import { generateKeypair, signerFromSeed, type Signer } from '../../src/keys/signer.js';
import { runDoctor, SAMPLE_TS_MS, type DoctorClient, type DoctorDeps } from '../../src/cli/commands/doctor/run.js';
import type { Headers } from '../../src/cli/commands/doctor/report.js';
import { HttpError } from '../../src/sandbox/reply.js';
import { verifySigned } from '../../src/sandbox/verify.js';
import { apiConfig } from '../api/helpers.js';
import { FakeClock } from '../support/clock.js';

const key = generateKeypair();
const signer = signerFromSeed(key.secretKey64.slice(0, 32));
const BASE = 'https://api.example.test/v1';
const API_KEY = 'replayer-has-the-api-key-0123456789';

type Answer = { status: number; headers?: Headers; rawText?: string } | 'never';

function client(answers: Record<string, Answer>): { client: DoctorClient; asked: string[] } {
  const api = apiConfig({ baseUrl: BASE });
  const asked: string[] = [];
  return {
    asked,
    client: {
      baseUrl: BASE,
      probe(path) {
        asked.push(path);
        const a = answers[path];
        if (a === undefined) return Promise.reject(new Error(`unexpected GET ${path}`));
        if (a === 'never') return new Promise(() => undefined);
        return Promise.resolve({ url: `${BASE}${path}`, status: a.status, headers: a.headers ?? {}, rawText: a.rawText ?? '' });
      },
      clockSkewMs: () => 0,
      prepare: (input, s, now) => prepareSigned(api, BASE, input, s, now),
    },
  };
}

function deps(c: DoctorClient, over: Partial<DoctorDeps> = {}): DoctorDeps {
  return {
    api: apiConfig({ baseUrl: BASE }),
    sandbox: false,
    wallets: [{ name: 'treasury', address: key.address }],
    client: c,
    apiKey: { kind: 'present', source: '$AUTOCLAIM_API_KEY' },
    keys: new Map<string, { signer: Signer } | { error: unknown }>([[key.address, { signer }]]),
    clockSkewThresholdMs: 30_000,
    clock: new FakeClock(),
    lookup: () => Promise.resolve(['192.0.2.7']),
    ...over,
  };
}

const summary = `{"address":"${key.address}","epoch":"2025-06-01","pending_sol":1,"lifetime_sol":2}`;

describe('doctor prints nothing a third party could replay', () => {
  it('every signed request carries a timestamp the sandbox refuses, and its signature is worthless with a fresh one', async () => {
    const clock = new FakeClock();
    const { client: c } = client({ '/health': { status: 200, rawText: '{"status":"ok"}' }, [`/rewards/wallet/${key.address}`]: { status: 200, rawText: summary } });
    const report = await runDoctor(deps(c, { clock }));
    expect(report.requests.map((r) => r.op).sort()).toEqual(['burn', 'claim', 'deposit', 'mint', 'withdraw']);
    expect(report.sample?.ts).toBe(SAMPLE_TS_MS / 1000);
    expect(report.findings.some((f) => /carry ts 1000000000 .*refuses them if replayed/.test(f.text))).toBe(true);

    // The replayer of the issue: the API key in hand, the sandbox's verifier with a generous window.
    const verify = (headers: Record<string, string>, body: string, op: keyof typeof DEFAULT_ENDPOINTS) =>
      verifySigned(op, { ...headers, authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, body, {
        apiKey: API_KEY,
        headerPrefix: 'x-svc',
        tsWindowSec: 86_400,
        endpoints: DEFAULT_ENDPOINTS,
        signatureEncoding: 'base58',
        clock,
        epoch: () => '2025-06-01',
      });
    for (const r of report.requests) {
      const headers = Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== 'authorization'));
      expect(headers['x-svc-ts']).toBe('1000000000');
      let refused: unknown;
      try {
        verify(headers, r.body, r.op as keyof typeof DEFAULT_ENDPOINTS);
      } catch (err) {
        refused = err;
      }
      expect(refused, r.op).toBeInstanceOf(HttpError);
      expect((refused as HttpError).message, r.op).toMatch(/ts|timestamp|window|stale/i);
      // The same request with a fresh timestamp: the signature does not cover it.
      const fresh = { ...headers, 'x-svc-ts': String(Math.floor(clock.now() / 1000)) };
      expect(() => verify(fresh, r.body, r.op as keyof typeof DEFAULT_ENDPOINTS), r.op).toThrow(/signature/i);
    }
  });
});

describe("doctor's waits are bounded by its own run", () => {
  it('a 429 with Retry-After: 120 is reported and stops the GETs at once: nothing waits', async () => {
    const { client: c, asked } = client({
      '/health': { status: 429, headers: { 'retry-after': '120' }, rawText: '' },
      [`/rewards/wallet/${key.address}`]: 'never',
    });
    const sleeps: number[] = [];
    const report = await runDoctor(deps(c, { sleep: (ms) => (sleeps.push(ms), new Promise(() => undefined)) }));
    expect(asked).toEqual(['/health']);
    expect(report.findings).toContainEqual(
      expect.objectContaining({ level: 'problem', text: expect.stringMatching(/rate limited: GET \/health was answered 429 \(Retry-After: 120\); doctor stops here instead of waiting/) as string }),
    );
    // Its signed requests are still shown: they need no answer.
    expect(report.requests.length).toBeGreaterThan(0);
  });

  it('a 429 on a summary stops there too', async () => {
    const { client: c, asked } = client({
      '/health': { status: 200, rawText: '{"status":"ok"}' },
      [`/rewards/wallet/${key.address}`]: { status: 429, headers: { 'retry-after': '120' } },
    });
    const two = deps(c, { wallets: [{ name: 'treasury', address: key.address }, { name: 'twin', address: key.address }] });
    const report = await runDoctor(two);
    expect(asked).toEqual(['/health', `/rewards/wallet/${key.address}`]);
    expect(report.findings.some((f) => f.level === 'problem' && f.text.startsWith('rate limited'))).toBe(true);
  });

  it('a server that never answers: doctor gives up at its deadline (an injected timer) and reports it', async () => {
    const { client: c } = client({ '/health': 'never' });
    const asked: number[] = [];
    const report = await runDoctor(deps(c, { deadlineMs: 5_000, sleep: (ms) => (asked.push(ms), Promise.resolve()) }));
    expect(asked).toEqual([5_000]);
    expect(report.findings).toContainEqual(expect.objectContaining({ area: 'reach', level: 'problem', text: expect.stringMatching(/no answer within doctor's own deadline \(5 s\)/) as string }));
  });
});
