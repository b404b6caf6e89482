// `doctor` in order: name → /health → clock → every wallet's summary → keys → the signed requests
// it would send. Only GETs go out; every edge (the client's GETs, DNS, the clock) comes in.
// The doctor/ folder: this order; checks.ts (what each answer means, pure), requests.ts (the
// signed requests, built and shown), report.ts (the findings as data) and format.ts (as text or JSON).
import { isIP } from 'node:net';
import { DEFAULT_HEADER_PREFIX } from '../api/endpoints.js';
import type { PreparedRequest, SignedInput } from '../api/signed-request.js';
import type { Signer } from '../api/signer.js';
import type { ApiConfig, Clock } from '../domain.js';
import {
  apiKeyFinding,
  clockSkewFinding,
  dnsFailure,
  dnsResolved,
  healthFinding,
  rateLimitFinding,
  rateLimitHeaders,
  reachFailure,
  requestIdFinding,
  requestIdOf,
  summaryFindings,
  tiersFinding,
  walletKeyOk,
  walletKeyProblem,
  type ApiKeyState,
} from './checks.js';
import type { DoctorReport, Finding, Headers } from './report.js';
import { previewRequests, sampleOf } from './requests.js';

/** The part of ApiClient doctor uses: GETs as they come back, the skew it saw, and prepare. */
export interface DoctorClient {
  readonly baseUrl: string;
  probe(path: string, opts: { auth: boolean }): Promise<{ url: string; status: number; headers: Headers; rawText: string }>;
  clockSkewMs(): number | undefined;
  prepare(input: SignedInput, signer: Signer, nowMs: number): PreparedRequest;
}

export interface DoctorDeps {
  api: Pick<ApiConfig, 'endpoints' | 'headerPrefix' | 'rateLimit'>;
  /** api.base_url was "sandbox": the simulator runs in this process. */
  sandbox: boolean;
  wallets: Array<{ name: string; address: string }>;
  client: DoctorClient;
  apiKey: ApiKeyState;
  /** What loading each wallet's key gave: its signer (address checked) or the error. */
  keys: Map<string, { signer: Signer } | { error: unknown }>;
  /** The alerts.clock_skew threshold. */
  clockSkewThresholdMs: number;
  clock: Clock;
  /** Resolves a host name to its addresses (dns.lookup); throws when it does not resolve. */
  lookup: (host: string) => Promise<string[]>;
}

export async function runDoctor(deps: DoctorDeps): Promise<DoctorReport> {
  const { client } = deps;
  const report: DoctorReport = {
    baseUrl: client.baseUrl,
    findings: [],
    clockSkewMs: undefined,
    rateLimitHeaders: {},
    requestIds: [],
    wallets: [],
    sample: undefined,
    requests: [],
  };
  const add = (f: Finding | undefined) => {
    if (f !== undefined) report.findings.push(f);
  };
  let answers = 0;
  const saw = (request: string, headers: Headers) => {
    answers += 1;
    Object.assign(report.rateLimitHeaders, rateLimitHeaders(headers));
    const id = requestIdOf(headers);
    if (id !== undefined) report.requestIds.push({ request, id });
  };

  const reachable = await reach(deps, report, saw);
  if (reachable) {
    report.clockSkewMs = client.clockSkewMs();
    add(clockSkewFinding(report.clockSkewMs, deps.clockSkewThresholdMs));
    for (const w of deps.wallets) {
      const path = `/rewards/wallet/${encodeURIComponent(w.address)}`;
      try {
        const answer = await client.probe(path, { auth: true });
        saw(`GET ${path}`, answer.headers);
        const { wallet, findings } = summaryFindings(w.name, w.address, answer);
        report.wallets.push(wallet);
        findings.forEach(add);
      } catch (err) {
        add(reachFailure(client.baseUrl, err));
      }
    }
    add(tiersFinding(report.wallets));
    add(rateLimitFinding(report.rateLimitHeaders, deps.api.rateLimit));
    add(requestIdFinding(report.requestIds, answers));
  }

  add(apiKeyFinding(deps.apiKey));
  for (const w of deps.wallets) {
    const result = deps.keys.get(w.address);
    if (result !== undefined) add('signer' in result ? walletKeyOk(w.name, w.address) : walletKeyProblem(w.name, result.error));
  }
  signing(deps, report);
  return report;
}

/** DNS, then GET /health; false when the service cannot be reached at all. */
async function reach(deps: DoctorDeps, report: DoctorReport, saw: (request: string, headers: Headers) => void): Promise<boolean> {
  const { client, clock } = deps;
  const url = new URL(client.baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!deps.sandbox && isIP(host) === 0) {
    try {
      report.findings.push(dnsResolved(host, await deps.lookup(host)));
    } catch (err) {
      report.findings.push(dnsFailure(client.baseUrl, host, err));
      return false;
    }
  }
  const started = clock.monotonic();
  try {
    const health = await client.probe('/health', { auth: false });
    saw('GET /health', health.headers);
    report.findings.push(healthFinding(health.status, health.rawText, clock.monotonic() - started, url.protocol === 'https:'));
    return true;
  } catch (err) {
    report.findings.push(reachFailure(client.baseUrl, err));
    return false;
  }
}

/** The header prefix, and the signed requests for the first wallet whose key loads. */
function signing(deps: DoctorDeps, report: DoctorReport): void {
  if (!deps.sandbox && deps.api.headerPrefix === DEFAULT_HEADER_PREFIX) {
    report.findings.push({
      area: 'signing',
      level: 'note',
      text: `api.header_prefix is ${DEFAULT_HEADER_PREFIX}, autoclaim's default; the real service names its headers with its own prefix (x-<prefix>-ts): check its documentation`,
    });
  }
  const first = deps.wallets[0];
  if (first === undefined) {
    report.findings.push({ area: 'signing', level: 'note', text: 'no wallets configured: no signed request to show' });
    return;
  }
  const chosen = deps.wallets.find((w) => {
    const r = deps.keys.get(w.address);
    return r !== undefined && 'signer' in r;
  });
  const loaded = chosen === undefined ? undefined : deps.keys.get(chosen.address);
  if (chosen === undefined || loaded === undefined || !('signer' in loaded)) {
    report.findings.push({ area: 'signing', level: 'note', text: 'no wallet key loads: the signed requests cannot be shown' });
    return;
  }
  if (chosen !== first) {
    report.findings.push({ area: 'signing', level: 'note', text: `signed requests shown for wallet ${chosen.name}: wallet ${first.name}'s key does not load` });
  }
  const nowMs = deps.clock.now();
  const epoch = report.wallets.find((w) => w.address === chosen.address)?.epoch;
  const { requests, findings } = previewRequests({
    api: deps.api,
    prepare: (input, signer, now) => deps.client.prepare(input, signer, now),
    wallet: chosen,
    signer: loaded.signer,
    apiKeyPresent: deps.apiKey.kind === 'present' || deps.apiKey.kind === 'sandbox',
    epoch,
    nowMs,
  });
  report.sample = sampleOf(chosen, nowMs);
  report.requests = requests;
  report.findings.push(...findings);
}
