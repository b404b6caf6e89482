// `doctor` in order: name → /health → clock → every wallet's summary → keys → the signed requests
// it would send. Only GETs go out; every edge (the client's GETs, DNS, the clock) comes in.
// The doctor/ folder: this order; checks.ts (what each answer means, pure), requests.ts (the
// signed requests, built and shown), report.ts (the findings as data) and format.ts (as text or JSON).
import { isIP } from 'node:net';
import { DEFAULT_HEADER_PREFIX } from '../../../api/endpoints.js';
import type { PreparedRequest, SignedInput } from '../../../api/signed-request.js';
import type { Signer } from '../../../keys/signer.js';
import type { ApiConfig, Clock } from '../../../domain.js';
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
import { probeSigning } from './probe.js';

/** The part of ApiClient doctor uses: GETs as they come back, the skew it saw, and prepare. */
export interface DoctorClient {
  readonly baseUrl: string;
  probe(path: string, opts: { auth: boolean }): Promise<{ url: string; status: number; headers: Headers; rawText: string }>;
  clockSkewMs(): number | undefined;
  prepare(input: SignedInput, signer: Signer, nowMs: number): PreparedRequest;
  /** For `--probe` only: sends one signed request. */
  send?(prepared: PreparedRequest): Promise<{ status: number; requestId?: string | undefined }>;
}

export interface DoctorDeps {
  api: Pick<ApiConfig, 'endpoints' | 'headerPrefix' | 'rateLimit'>;
  /** api.base_url was "sandbox": the simulator runs in this process. */
  sandbox: boolean;
  wallets: Array<{ name: string; address: string }>;
  client: DoctorClient;
  apiKey: ApiKeyState;
  /** What loading each wallet's key gave: its signer (address checked) or the error. */
  /** `signer`: an in-process key (the sample requests are signed with it); `remote`: a backend that answered and derives the address. */
  keys: Map<string, { signer: Signer; backend?: string } | { remote: string } | { error: unknown }>;
  /** The alerts.clock_skew threshold. */
  clockSkewThresholdMs: number;
  clock: Clock;
  /** Resolves a host name to its addresses (dns.lookup); throws when it does not resolve. */
  lookup: (host: string) => Promise<string[]>;
  /** Doctor's whole run, in ms of clock.monotonic(); DOCTOR_DEADLINE_MS unless given. */
  deadlineMs?: number;
  /** Waits `ms` (a timer); a test passes one that never fires, or fires at once. */
  sleep?: (ms: number) => Promise<void>;
  /** `--probe`: send each signed operation once, signed with a wrong key (probe.ts). */
  probe?: boolean;
}

/**
 * Doctor is a first contact, run by a person: it never waits out a rate limit or a silent server.
 * A 429 stops its GETs there (reported, with the server's Retry-After), and every GET is bounded
 * by what is left of this deadline (issue 24, finding 10: a `429 Retry-After: 120` kept it waiting).
 */
export const DOCTOR_DEADLINE_MS = 30_000;

/**
 * The signed requests are shown with this timestamp (2001-09-09T01:46:40Z), far outside any
 * freshness window the service keeps: signed by the wallet's real key (so they show exactly what
 * autoclaim signs) yet refused if anyone replays them (SPEC §2: doctor never prints a request a
 * third party could replay; issue 24, finding 10).
 */
export const SAMPLE_TS_MS = 1_000_000_000_000;

type Probe = Awaited<ReturnType<DoctorClient['probe']>>;

/** The GETs of one run: bounded by the deadline, and none after a 429. */
class Gets {
  private readonly started: number;
  private stopped = false;

  constructor(
    private readonly deps: DoctorDeps,
    private readonly report: DoctorReport,
  ) {
    this.started = deps.clock.monotonic();
  }

  /** The answer, or undefined when doctor stopped asking (said once, as a finding). */
  async get(path: string, auth: boolean): Promise<Probe | undefined> {
    if (this.stopped) return undefined;
    const left = (this.deps.deadlineMs ?? DOCTOR_DEADLINE_MS) - (this.deps.clock.monotonic() - this.started);
    const answer = left <= 0 ? undefined : await within(this.deps.client.probe(path, { auth }), left, this.deps.sleep);
    if (answer === undefined) {
      this.stop(`no answer within doctor's own deadline (${Math.round((this.deps.deadlineMs ?? DOCTOR_DEADLINE_MS) / 1000)} s): GET ${path} and what follows were not waited for; check the service's reachability and run doctor again`, 'reach');
      return undefined;
    }
    if (answer.status === 429) {
      const after = answer.headers['retry-after'];
      const hint = typeof after === 'string' ? ` (Retry-After: ${after})` : '';
      this.stop(`rate limited: GET ${path} was answered 429${hint}; doctor stops here instead of waiting: run it again once the limit has passed`, 'limits');
    }
    return answer;
  }

  private stop(text: string, area: 'reach' | 'limits'): void {
    this.stopped = true;
    this.report.findings.push({ area, level: 'problem', text });
  }
}

/** `p`'s value, or undefined when `ms` pass first. */
async function within<T>(p: Promise<T>, ms: number, sleep?: (ms: number) => Promise<void>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = sleep !== undefined ? sleep(ms) : new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    return await Promise.race([p, expiry.then(() => undefined)]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
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

  const gets = new Gets(deps, report);
  const reachable = await reach(deps, report, saw, gets);
  if (reachable) {
    report.clockSkewMs = client.clockSkewMs();
    add(clockSkewFinding(report.clockSkewMs, deps.clockSkewThresholdMs));
    for (const w of deps.wallets) {
      const path = `/rewards/wallet/${encodeURIComponent(w.address)}`;
      try {
        const answer = await gets.get(path, true);
        if (answer === undefined) break;
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
    if (result === undefined) continue;
    if ('signer' in result) add(walletKeyOk(w.name, w.address, result.backend));
    else if ('remote' in result) add(walletKeyOk(w.name, w.address, result.remote));
    else add(walletKeyProblem(w.name, result.error));
  }
  signing(deps, report);
  if (deps.probe === true && reachable) await probe(deps, report);
  return report;
}

/** `--probe` for the first wallet: what the service's refusals say (probe.ts). */
async function probe(deps: DoctorDeps, report: DoctorReport): Promise<void> {
  const wallet = deps.wallets[0];
  const send = deps.client.send?.bind(deps.client);
  if (wallet === undefined || send === undefined) return;
  const nowMs = deps.clock.now();
  const epoch = report.wallets.find((w) => w.address === wallet.address)?.epoch ?? new Date(nowMs).toISOString().slice(0, 10);
  const client = { prepare: deps.client.prepare.bind(deps.client), send };
  const { results, findings } = await probeSigning({ api: deps.api, client, nowMs, epoch }, wallet);
  report.probes = results;
  report.findings.push(...findings);
  // The service read our headers: the default prefix is its prefix after all.
  if (results.some((r) => r.hint === 'signature')) {
    for (const f of report.findings) {
      if (f.area === 'signing' && f.level === 'warning' && f.text.startsWith('api.header_prefix is')) {
        f.level = 'ok';
        f.text = `api.header_prefix ${deps.api.headerPrefix}: the probe shows the service reads these headers`;
      }
    }
  }
}

/** DNS, then GET /health; false when the service cannot be reached at all. */
async function reach(deps: DoctorDeps, report: DoctorReport, saw: (request: string, headers: Headers) => void, gets: Gets): Promise<boolean> {
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
    const health = await gets.get('/health', false);
    if (health === undefined) return false;
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
      level: 'warning',
      text: `api.header_prefix is ${DEFAULT_HEADER_PREFIX}, autoclaim's default, a guess: the real service names its headers with its own prefix (x-<prefix>-ts); check its documentation, or run \`autoclaim doctor --probe\``,
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
  const nowMs = SAMPLE_TS_MS;
  report.findings.push({
    area: 'signing',
    level: 'note',
    text: `the signed requests below carry ts ${nowMs / 1000} (${new Date(nowMs).toISOString()}), far outside the service's freshness window: they show exactly what autoclaim signs, and the service refuses them if replayed`,
  });
  const epoch = report.wallets.find((w) => w.address === chosen.address)?.epoch;
  const { requests, findings } = previewRequests({
    api: deps.api,
    prepare: (input, signer, now) => deps.client.prepare(input, signer, now),
    wallet: chosen,
    signer: loaded.signer,
    apiKeyPresent: deps.apiKey.kind === 'present' || deps.apiKey.kind === 'sandbox',
    epoch,
    nowMs,
    todayMs: deps.clock.now(),
  });
  report.sample = sampleOf(chosen, nowMs);
  report.requests = requests;
  report.findings.push(...findings);
}
