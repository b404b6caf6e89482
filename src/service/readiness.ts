// /readyz: is the daemon able to do its job? Four things can stop it, and each is a reason named
// in the answer: no wallet poll has succeeded for alerts.stale_after_intervals poll intervals (the
// last success is restored from the state file, so neither a restart nor a long schedule's first
// wait hides or fakes it), the state database cannot take a write (with shared state, one known
// unreachable is said at once, without a probe: reachability.ts) or answer the read every turn
// waits for (which rules planned before: rule-ids-settle.ts), signing is paused because the
// server refused a request as invalid, or a wallet's signer (SPEC §7) has not answered for as long
// as the signer_unavailable alert waits. A reload that was refused is not one: the previous config
// keeps running, and the answer says so without failing.
//
// In a cluster (state.url: several daemons on one PostgreSQL state, each working the wallets it
// holds leases on) ready means "doing a share of the work now", so a load balancer or a count of
// ready daemons counts working ones:
// - a daemon holding leases is checked as above, its poll check over the wallets it holds;
// - a daemon holding no lease while other daemons are live is *standby*: 503 with `standby: true`
//   and a `cluster: standby` reason. That is not an error (the others hold every wallet, and it
//   takes some at the next rebalance or when one stops); monitoring tells it apart by `standby`,
//   and the shipped alerts do not page on it. The poll check does not apply to it (it polls
//   nothing); the db and signing checks do, as it may have to take over at any moment;
// - a daemon alone in the cluster holding nothing is not ready, and that is a fault: nobody works
//   the wallets (its lease rounds fail, or every recovery failed; the log says which).

interface PauseInfo {
  reason: string;
  since: number;
}

/** What the daemon knows about itself, gathered on each /readyz request. */
export interface HealthReport {
  now: number;
  /** The newest successful poll of any wallet (Unix ms), from the state file or this process. */
  lastSuccessAt: number | undefined;
  /** When this process started; with no success ever recorded, the window counts from here. */
  startedAt: number;
  /** The expected time between two polls of a wallet (from the schedule). */
  pollIntervalMs: number;
  staleAfterIntervals: number;
  /** Why the write probe failed; undefined when the database took it. */
  dbError: string | undefined;
  /** A read every turn needs that does not answer (the rule ids: executor/rule-ids-settle.ts), though the write probe may pass. */
  dbReadError?: string | undefined;
  signing: {
    /** Every wallet paused (the API key was refused). */
    all: PauseInfo | undefined;
    /** Wallets paused one by one, by address. */
    wallets: ReadonlyMap<string, PauseInfo>;
  };
  /**
   * Wallets whose signer has not answered (signed or refused) for longer than the
   * signer_unavailable alert waits (alerts.ts signerDownTooLong): their steps wait, unsigned.
   */
  signersDown: ReadonlyArray<{ wallet: string; backend: string; code: string; since: number }>;
  /** false after a reload was refused (informational: the previous config is in force). */
  configValid: boolean;
  /**
   * With shared state (state.url): the wallets this daemon holds leases on and works, and the
   * daemons live in the cluster, this one counted. Undefined on a state of its own (SQLite).
   */
  cluster?: {
    held: number;
    live: number;
    /** Live daemons running another config (rules, safety, lease): the wallets they list too are worked by neither. */
    conflict?: { others: readonly string[]; contested: number };
    /** A newer autoclaim migrated the shared schema: this daemon stepped aside (cluster/schema-watch.ts). */
    schemaNewer?: { reason: string };
  };
}

export interface Check {
  ok: boolean;
  detail: string;
}

export interface Readiness {
  ready: boolean;
  /** In a cluster, holds no lease while others are live: not ready, and not a fault. */
  standby: boolean;
  /** One line per failing check, `check: detail`; empty when ready. */
  reasons: string[];
  checks: {
    poll: Check & { ageMs: number; maxAgeMs: number; lastSuccessAt: string | null };
    db: Check;
    signing: Check & { all: boolean; wallets: number };
    signer: Check & { wallets: number };
    /** Never fails readiness. */
    config: Check;
    /** Only with shared state. */
    cluster?: Check & { held: number; live: number };
  };
}

/** How many paused wallets (or wallets with a signer down) the answer names (the count is always given). */
const NAMED_PAUSES = 5;

export function evaluateReadiness(r: HealthReport): Readiness {
  const cluster = clusterCheck(r.cluster);
  const standby = cluster?.standby ?? false;
  const maxAgeMs = r.staleAfterIntervals * r.pollIntervalMs;
  // A clock stepped back makes the age negative: that is still a recent success.
  const ageMs = Math.max(0, r.now - (r.lastSuccessAt ?? r.startedAt));
  const window = `${r.staleAfterIntervals} poll interval(s) of ${duration(r.pollIntervalMs)}`;
  let pollDetail: string;
  if (ageMs <= maxAgeMs) {
    pollDetail = r.lastSuccessAt === undefined ? `no successful poll yet; started ${duration(ageMs)} ago` : `last successful poll ${duration(ageMs)} ago`;
  } else {
    pollDetail =
      r.lastSuccessAt === undefined
        ? `no wallet poll has succeeded since the start ${duration(ageMs)} ago (more than ${window})`
        : `no wallet poll has succeeded for ${duration(ageMs)} (more than ${window})`;
  }
  const poll = {
    // A standby daemon polls nothing, so it has nothing to be late with.
    ok: standby || ageMs <= maxAgeMs,
    detail: standby ? 'not applicable: standby, no wallet to poll' : pollDetail,
    ageMs,
    maxAgeMs,
    lastSuccessAt: r.lastSuccessAt === undefined ? null : new Date(r.lastSuccessAt).toISOString(),
  };

  const db =
    r.dbError !== undefined
      ? { ok: false, detail: `the state database cannot be written: ${r.dbError}` }
      : r.dbReadError !== undefined
        ? { ok: false, detail: `the state database cannot be read: ${r.dbReadError}` }
        : { ok: true, detail: 'writable' };

  const paused = r.signing.wallets.size;
  let signingDetail = 'not paused';
  if (r.signing.all !== undefined) {
    signingDetail = `paused for every wallet since ${new Date(r.signing.all.since).toISOString()}: ${r.signing.all.reason}`;
  } else if (paused > 0) {
    const named = [...r.signing.wallets].slice(0, NAMED_PAUSES).map(([address, p]) => `${address}: ${p.reason}`);
    signingDetail = `paused for ${paused} wallet(s): ${named.join('; ')}${paused > NAMED_PAUSES ? '; …' : ''}`;
  }
  const signing = { ok: r.signing.all === undefined && paused === 0, detail: signingDetail, all: r.signing.all !== undefined, wallets: paused };

  const down = r.signersDown.length;
  const signerDetail =
    down === 0
      ? 'answering'
      : `${down} wallet(s) whose signer has not answered: ${r.signersDown
          .slice(0, NAMED_PAUSES)
          .map((d) => `${d.wallet} (${d.backend}, ${d.code || 'no answer'}, since ${new Date(d.since).toISOString()})`)
          .join('; ')}${down > NAMED_PAUSES ? '; …' : ''}`;
  const signer = { ok: down === 0, detail: signerDetail, wallets: down };

  const config = {
    ok: true,
    detail: r.configValid ? 'valid' : 'the last reload was refused (see config.invalid in the log); the previous config is running',
  };

  const checks = { poll, db, signing, signer, config };
  const reasons = (['poll', 'db', 'signing', 'signer'] as const).filter((k) => !checks[k].ok).map((k) => `${k}: ${checks[k].detail}`);
  if (cluster === undefined) return { ready: reasons.length === 0, standby, reasons, checks };
  const { standby: _, ...check } = cluster;
  // First: it says why the others may not matter (standby) or what they come from (no lease).
  if (!check.ok) reasons.unshift(`cluster: ${check.detail}`);
  return { ready: reasons.length === 0, standby, reasons, checks: { ...checks, cluster: check } };
}

function clusterCheck(c: HealthReport['cluster']): (Check & { held: number; live: number; standby: boolean }) | undefined {
  if (c === undefined) return undefined;
  const { held, live } = c;
  // Not standby: it will take nothing back until it runs the newer release.
  if (c.schemaNewer !== undefined) return { ok: false, detail: c.schemaNewer.reason, held, live, standby: false };
  if (c.conflict !== undefined) {
    // Not standby, whatever it holds: wallets are left unworked until the configs agree.
    const { others, contested } = c.conflict;
    return {
      ok: false,
      detail: `config differs from live daemon(s) ${others.join(', ')} (rules, safety or lease settings, or another release during an upgrade): ${contested} wallet(s) they list too are worked by neither until the configs agree (see cluster.config_differs in the log)`,
      held,
      live,
      standby: false,
    };
  }
  if (held > 0) return { ok: true, detail: `holds ${held} lease(s); ${live} daemon(s) live`, held, live, standby: false };
  if (live > 1) {
    const others = live - 1;
    return {
      ok: false,
      detail: `standby: holds no lease while ${others} other daemon(s) are live and hold the wallets; it takes some when the split changes or one stops (not an error)`,
      held,
      live,
      standby: true,
    };
  }
  return {
    ok: false,
    detail: 'holds no lease and no other daemon is live, so no wallet is being worked (see lease.tick_failed, lease.lost and lease.recovery_failed in the log)',
    held,
    live,
    standby: false,
  };
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}
