// The signed requests doctor shows: built by the sending code (prepareSigned), for every operation
// the config has, the bearer masked whole; and the signature really is over the message shown.
import { describe, expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { prepareSigned } from '../../src/api/signed-request.js';
import { decodeSignature, generateKeypair, signerFromSeed } from '../../src/keys/signer.js';
import { verifySignature } from '../../src/keys/verify.js';
import { formatJson, formatText } from '../../src/cli/commands/doctor/format.js';
import type { DoctorReport } from '../../src/cli/commands/doctor/report.js';
import { previewRequests, sampleOf, type PreviewInput } from '../../src/cli/commands/doctor/requests.js';
import type { ApiConfig } from '../../src/domain.js';
import { apiConfig } from '../api/helpers.js';

const kp = generateKeypair();
const signer = signerFromSeed(kp.secretKey64.slice(0, 32));
const NOW = Date.UTC(2025, 9, 31, 12, 0, 0, 500);
const TS = String(Math.floor(NOW / 1000));

function input(over: Partial<PreviewInput> = {}, api: ApiConfig = apiConfig({ baseUrl: 'https://api.example.com/v1', headerPrefix: 'x-acme' })): PreviewInput {
  return {
    api,
    prepare: (i, s, now) => prepareSigned(api, api.baseUrl, i, s, now),
    wallet: { name: 'treasury', address: kp.address },
    signer,
    apiKeyPresent: true,
    epoch: '2025-10-31',
    nowMs: NOW,
    ...over,
  };
}

describe('previewRequests', () => {
  it('shows claim, deposit and mint exactly as they would be sent', () => {
    const { requests, findings } = previewRequests(input());
    expect(findings).toEqual([]);
    expect(requests.map((r) => r.op)).toEqual(Object.keys(DEFAULT_ENDPOINTS));
    const [claim, deposit] = requests;
    expect(claim).toMatchObject({
      method: 'POST',
      url: 'https://api.example.com/v1/rewards/claim',
      template: '{wallet}|{ts}',
      message: `${kp.address}|${TS}`,
      headers: {
        authorization: 'Bearer [REDACTED]',
        'content-type': 'application/json',
        'x-acme-ts': TS,
        'x-acme-wallet': kp.address,
      },
    });
    expect(JSON.parse(claim!.body)).toEqual({ wallet: kp.address, signature: expect.any(String) });
    expect(claim!.notes.join(' ')).toMatch(/does not publish the claim message: confirm this template with the service/);
    expect(deposit).toMatchObject({
      url: 'https://api.example.com/v1/actions/deposit',
      message: `${kp.address}|SOL2X|0.000000001|${TS}`,
      notes: [],
    });
    expect(deposit!.body).toMatch(/^\{"symbol":"SOL2X","amount":0\.000000001,"wallet":"[^"]+","signature":"[^"]+"\}$/);
    for (const r of requests) {
      const { signature } = JSON.parse(r.body) as { signature: string };
      expect(verifySignature(new TextEncoder().encode(r.message), decodeSignature(signature, 'base58'), kp.address)).toBe(true);
    }
  });

  it('says when no key would be sent', () => {
    const { requests } = previewRequests(input({ apiKeyPresent: false }));
    expect(requests[0]?.headers['authorization']).toMatch(/^\(none: no API key/);
  });

  it('notes an action template that differs from the documented one, and an epoch it had to make up', () => {
    const base = apiConfig({ baseUrl: 'https://api.example.com/v1' });
    const api: ApiConfig = {
      ...base,
      endpoints: {
        ...base.endpoints,
        claim: { ...DEFAULT_ENDPOINTS.claim, message: '{wallet}|{ts}|{epoch}' },
        mint: { ...DEFAULT_ENDPOINTS.mint, message: '{op}|{wallet}|{symbol}|{amount}|{ts}' },
      },
    };
    const { requests } = previewRequests(input({ epoch: undefined }, api));
    expect(requests[0]?.message).toBe(`${kp.address}|${TS}|2025-10-31`);
    expect(requests[0]?.notes.join(' ')).toMatch(/\{epoch\} is today's UTC date here/);
    const mint = requests.find((r) => r.op === 'mint');
    expect(mint?.message).toBe(`mint|${kp.address}|SOL2X|0.000000001|${TS}`);
    expect(mint?.notes.join(' ')).toMatch(/differs from the message the service documents/);
  });

  it('reports an operation it cannot build as a problem, and shows the others', () => {
    const { requests, findings } = previewRequests(
      input({
        prepare: (i, s, now) => {
          if (i.op === 'mint') throw new Error('boom');
          const api = apiConfig({ baseUrl: 'https://h/v1' });
          return prepareSigned(api, api.baseUrl, i, s, now);
        },
      }),
    );
    expect(requests.map((r) => r.op)).toEqual(Object.keys(DEFAULT_ENDPOINTS).filter((op) => op !== 'mint'));
    expect(findings).toEqual([{ area: 'signing', level: 'problem', text: 'mint: cannot build the signed request (boom); fix api.endpoints.mint' }]);
  });
});

describe('formatText and formatJson', () => {
  const { requests } = previewRequests(input());
  const report: DoctorReport = {
    baseUrl: 'https://api.example.com/v1',
    findings: [
      { area: 'reach', level: 'ok', text: 'GET /health: HTTP 200' },
      { area: 'clock', level: 'problem', text: "this machine's clock is 10m behind" },
    ],
    clockSkewMs: 600_000,
    rateLimitHeaders: {},
    requestIds: [{ request: 'GET /health', id: 'r1' }],
    wallets: [],
    sample: sampleOf({ name: 'treasury', address: kp.address }, NOW),
    requests,
  };

  it('prints every finding, every request, and one line per problem at the end', () => {
    const text = formatText(report);
    expect(text).toContain(`NOT sent (wallet treasury, symbol SOL2X, amount 0.000000001 SOL, ts ${TS})`);
    expect(text).toContain('    authorization: Bearer [REDACTED]\n');
    expect(text).toContain(`    signed message: ${kp.address}|${TS}\n`);
    expect(text).toMatch(/\n {2}PROBLEM {2}clock {4}this machine's clock is 10m behind\n/);
    expect(text.endsWith("doctor: 1 problem(s) to fix:\n  - this machine's clock is 10m behind")).toBe(true);
    expect(formatText({ ...report, findings: [] }).endsWith('doctor: all well')).toBe(true);
  });

  it('prints one JSON object saying nothing was sent', () => {
    const parsed = JSON.parse(formatJson(report)) as Record<string, unknown> & { requests: Array<{ sent: boolean; op: string }> };
    expect(parsed).toMatchObject({ ok: false, problems: ["this machine's clock is 10m behind"], clockSkewMs: 600_000, baseUrl: 'https://api.example.com/v1' });
    expect(parsed.requests.map((r) => [r.op, r.sent])).toEqual(Object.keys(DEFAULT_ENDPOINTS).map((op) => [op, false]));
  });
});
