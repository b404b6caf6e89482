// Staleness alerts, raised once per episode: a wallet without a successful poll for N intervals,
// an `unknown` step left open past a threshold, a wallet whose claims are held as "claim in doubt"
// past the same threshold, a wallet whose polled epoch is refused (SPEC §2), and — with shared
// state — this machine's clock out of bounds of the database's (`clock_skew`) or live daemons
// running another config (`config_differs`), is logged at error level when the episode opens and
// at info when it closes, never on every tick. The tracker and the evaluation are pure; the
// daemon feeds them what it knows and logs (and notifies) the transitions.
import { amountFields } from '../rules/amounts.js';
import type { LogFields, Logger } from '../log/logger.js';
import type { WebhookNotifier } from './webhook.js';
import type { AlertKind } from './alert-kinds.js';

type EpisodeChange = 'opened' | 'closed' | undefined;

interface OpenEpisode {
  key: string;
  since: number;
}

interface AlertTracker {
  /** Records the current state of `key`; says whether an episode just opened or closed. */
  observe(key: string, bad: boolean, now: number): EpisodeChange;
  isOpen(key: string): boolean;
  open(): OpenEpisode[];
  /** Open episodes by alert kind (the part of each key before ':'), for autoclaim_alerts_open. */
  openKinds(): Map<string, number>;
  /** What follows the kind in the keys of this kind's open episodes (the wallet names of wallet_stale). */
  openOf(kind: AlertKind): string[];
}

export function createAlertTracker(): AlertTracker {
  const episodes = new Map<string, number>();
  return {
    observe(key, bad, now) {
      const open = episodes.has(key);
      if (bad && !open) {
        episodes.set(key, now);
        return 'opened';
      }
      if (!bad && open) {
        episodes.delete(key);
        return 'closed';
      }
      return undefined;
    },
    isOpen: (key) => episodes.has(key),
    open: () => [...episodes].map(([key, since]) => ({ key, since })),
    openKinds: () => {
      const counts = new Map<string, number>();
      for (const key of episodes.keys()) {
        const kind = splitKey(key)[0];
        counts.set(kind, (counts.get(kind) ?? 0) + 1);
      }
      return counts;
    },
    openOf: (kind) => {
      const out: string[] = [];
      for (const key of episodes.keys()) {
        const [k, rest] = splitKey(key);
        if (k === kind && rest !== undefined) out.push(rest);
      }
      return out;
    },
  };
}


/** Conditions of the whole daemon in a cluster (state.url): each is one episode while it lasts. */
export type ClusterAlertKind = Extract<AlertKind, 'clock_skew' | 'config_differs' | 'schema_newer'>;

export interface AlertInputs {
  now: number;
  /** Expected time between polls of a wallet. */
  intervalMs: number;
  staleAfterIntervals: number;
  unknownStepAfterMs: number;
  /**
   * The wallets watched for staleness. `lastOkAt` undefined: never polled successfully; `since` is
   * when we started watching it. A wallet left out closes its open episode as no longer watched,
   * so a caller may leave out only wallets that are fresh and have no open episode (as
   * Fleet.staleOrNamed does): their state cannot change.
   */
  wallets: Array<{ name: string; lastOkAt: number | undefined; since: number }>;
  /**
   * Every step currently in state unknown. `held`: a claim the daemon gave up reconciling because
   * the summary moved without proving it (claim_undetermined): alerted at once, not after a delay.
   */
  unknownSteps: Array<{ id: number; plan: number; wallet: string; kind: string; since: number; held?: boolean; symbol?: string | undefined; amountLamports?: bigint | undefined }>;
  /** With shared state: the database unreachable since then (nothing signed meanwhile); undefined when it answers. */
  stateUnreachable?: { since: number; error: string };
  /** Wallets whose claims are held as "claim in doubt", since when (alerted past unknownStepAfterMs). */
  claimsInDoubt?: Array<{ wallet: string; since: number }>;
  /** With shared state: whether each cluster condition holds now, and what to say when it opens. */
  cluster?: Array<{ kind: ClusterAlertKind; bad: boolean; text: string }>;
  /**
   * Wallets whose last poll was refused for its epoch (INVALID_EPOCH), with why; a wallet leaves
   * the list at its next good poll. Absent: none.
   */
  epochRefused?: Array<{ name: string; detail: string }>;
  /**
   * alerts.unclaimed_after (absent: off) and, per wallet, since when no claim was applied (or since
   * it was first polled in this process) and whether its pending has grown since: a wallet whose
   * rewards pile up with nothing claimed for that long (a rule that can never fire, a pause
   * forgotten) is told.
   */
  unclaimedAfterMs?: number;
  claimWatch?: Array<{ wallet: string; since: number; grew: boolean }>;
  /**
   * Wallets whose signer has not answered since `since` (Vault sealed or its token refused, KMS
   * throttling, a token pulled, the signer service down: SIGNER_UNAVAILABLE or its deadline), with
   * its backend and last code; a wallet leaves the list when its signer answers. Opened past one
   * interval between polls: a blip that the next turn signs through is not told.
   */
  signerUnavailable?: Array<{ wallet: string; backend: string; code: string; detail: string; since: number }>;
}

interface AlertTransition {
  key: string;
  kind: AlertKind;
  change: 'opened' | 'closed';
  wallet: string;
  step?: number;
  plan?: number;
  /** An unknown step's op, symbol and amount, for the notice's facts. */
  facts?: { op: string; symbol?: string | undefined; amount_sol?: string | undefined; amount_units?: string | undefined; unit?: string | undefined };
  /** For humans: what is wrong, or that it is over. */
  text: string;
}

/**
 * A signer silent since `since` is an alert (signer_unavailable) and a /readyz reason once it has
 * been so for one time between polls (`intervalMs`): one slow answer, retried at the next turn,
 * is neither.
 */
export function signerDownTooLong(since: number, now: number, intervalMs: number): boolean {
  return now - since >= intervalMs;
}

/**
 * Forgets what is kept per wallet name (a signer down, an epoch refused, a claim watch) for the
 * wallets this daemon no longer answers for: those taken out of the config or renamed and, in a
 * cluster (`held`: the addresses whose lease it holds), those moved to another daemon. Only this
 * daemon's poll or signature of the wallet clears such an entry, and none comes again: it would
 * stay, an open alert (and a /readyz reason) about a wallet worked by nobody here, for good.
 */
export function forgetWalletsNotHere(kept: Map<string, unknown>, wallets: ReadonlyArray<{ name: string; address: string }>, held: ReadonlySet<string> | undefined): void {
  if (kept.size === 0) return;
  const here = new Set(wallets.filter((w) => held?.has(w.address) ?? true).map((w) => w.name));
  for (const wallet of kept.keys()) if (!here.has(wallet)) kept.delete(wallet);
}

/**
 * Compares what is true now with the open episodes. A key that no longer appears (a wallet taken
 * out of the config, a step resolved) closes its episode.
 */
export function evaluateAlerts(tracker: AlertTracker, inputs: AlertInputs): AlertTransition[] {
  const out: AlertTransition[] = [];
  const seen = new Set<string>();
  const staleAfterMs = inputs.staleAfterIntervals * inputs.intervalMs;

  for (const w of inputs.wallets) {
    const key = `wallet_stale:${w.name}`;
    seen.add(key);
    const ageMs = inputs.now - (w.lastOkAt ?? w.since);
    const change = tracker.observe(key, ageMs > staleAfterMs, inputs.now);
    if (change === undefined) continue;
    const text =
      change === 'opened'
        ? `wallet ${w.name}: no successful poll for ${minutes(ageMs)} (more than ${inputs.staleAfterIntervals} × ${minutes(inputs.intervalMs)}, its time between polls)`
        : `wallet ${w.name}: polling again`;
    out.push({ key, kind: 'wallet_stale', change, wallet: w.name, text });
  }

  for (const s of inputs.unknownSteps) {
    if (s.held === true) {
      const key = `claim_undetermined:${s.id}`;
      seen.add(key);
      if (tracker.observe(key, true, inputs.now) !== 'opened') continue;
      const text =
        `wallet ${s.wallet}: claim step ${s.id} (plan ${s.plan}) is undetermined: the summary moved without proving the claim (a pending drop alone, or an epoch rollover); ` +
        `it is not sent again and nothing sized from it runs. Check it on chain, then \`autoclaim actions resolve ${s.id} --applied|--not-applied\``;
      out.push({ key, kind: 'claim_undetermined', change: 'opened', wallet: s.wallet, step: s.id, plan: s.plan, facts: stepFacts(s), text });
      continue;
    }
    const key = `unknown_step:${s.id}`;
    seen.add(key);
    const ageMs = inputs.now - s.since;
    const change = tracker.observe(key, ageMs > inputs.unknownStepAfterMs, inputs.now);
    if (change === undefined) continue;
    const text =
      change === 'opened'
        ? `wallet ${s.wallet}: ${s.kind} step ${s.id} (plan ${s.plan}) has been unknown for ${minutes(ageMs)}; ` +
          `check it on the server, then \`autoclaim actions resolve ${s.id} --applied|--not-applied\``
        : `wallet ${s.wallet}: ${s.kind} step ${s.id} is no longer unknown`;
    out.push({ key, kind: 'unknown_step', change, wallet: s.wallet, step: s.id, plan: s.plan, facts: stepFacts(s), text });
  }

  {
    const key = 'state_unreachable';
    seen.add(key);
    const down = inputs.stateUnreachable;
    const change = tracker.observe(key, down !== undefined, inputs.now);
    if (change !== undefined) {
      const text =
        down !== undefined
          ? `the state database has been unreachable for ${minutes(inputs.now - down.since)} (${down.error}); nothing is signed or sent until it answers again`
          : 'the state database answers again; signing and sending resume';
      out.push({ key, kind: 'state_unreachable', change, wallet: '', text });
    }
  }

  for (const d of inputs.claimsInDoubt ?? []) {
    const key = `claim_in_doubt:${d.wallet}`;
    seen.add(key);
    const ageMs = inputs.now - d.since;
    const change = tracker.observe(key, ageMs > inputs.unknownStepAfterMs, inputs.now);
    if (change === undefined) continue;
    const text =
      change === 'opened'
        ? `wallet ${d.wallet}: claims held back for ${minutes(ageMs)} because an earlier claim is still in doubt (sending or unknown); see \`autoclaim actions\``
        : `wallet ${d.wallet}: claims are no longer held back`;
    out.push({ key, kind: 'claim_in_doubt', change, wallet: d.wallet, text });
  }

  for (const c of inputs.cluster ?? []) {
    seen.add(c.kind);
    const change = tracker.observe(c.kind, c.bad, inputs.now);
    if (change === undefined) continue;
    out.push({ key: c.kind, kind: c.kind, change, wallet: '', text: change === 'opened' ? c.text : `${c.kind.replace('_', ' ')}: over` });
  }

  for (const w of inputs.epochRefused ?? []) {
    const key = `epoch_refused:${w.name}`;
    seen.add(key);
    const change = tracker.observe(key, true, inputs.now);
    if (change === undefined) continue;
    const text = `wallet ${w.name}: the API's epoch is not believed, so nothing is decided for it: ${w.detail}`;
    out.push({ key, kind: 'epoch_refused', change, wallet: w.name, text });
  }

  const unclaimedAfterMs = inputs.unclaimedAfterMs;
  for (const c of inputs.claimWatch ?? []) {
    if (unclaimedAfterMs === undefined) break;
    const key = `claims_stalled:${c.wallet}`;
    seen.add(key);
    const ageMs = inputs.now - c.since;
    const change = tracker.observe(key, c.grew && ageMs > unclaimedAfterMs, inputs.now);
    if (change === undefined) continue;
    const text =
      change === 'opened'
        ? `wallet ${c.wallet}: pending has grown for ${minutes(ageMs)} and nothing was claimed; check its rules (thresholds, enabled), safety.paused and \`autoclaim status\``
        : `wallet ${c.wallet}: claimed again`;
    out.push({ key, kind: 'claims_stalled', change, wallet: c.wallet, text });
  }

  for (const u of inputs.signerUnavailable ?? []) {
    const key = `signer_unavailable:${u.wallet}`;
    seen.add(key);
    const ageMs = inputs.now - u.since;
    // Once open it stays open while listed (its age only grows); it closes below, when it leaves.
    if (!signerDownTooLong(u.since, inputs.now, inputs.intervalMs) || tracker.observe(key, true, inputs.now) !== 'opened') continue;
    const text = `wallet ${u.wallet}: its ${u.backend} signer has not signed for ${minutes(ageMs)} (${u.code}: ${u.detail}); its steps wait, planned, nothing sent — they are signed once it answers`;
    out.push({ key, kind: 'signer_unavailable', change: 'opened', wallet: u.wallet, text });
  }

  for (const { key } of tracker.open()) {
    if (seen.has(key)) continue;
    tracker.observe(key, false, inputs.now);
    const [kind, rest = ''] = splitKey(key);
    if (kind === 'unknown_step' || kind === 'claim_undetermined') {
      out.push({ key, kind, change: 'closed', wallet: '', step: Number(rest), text: `step ${rest} is no longer unknown` });
    } else if (kind === 'signer_unavailable') {
      // Left the list: its signer answered (signed, or refused: it judged), or the wallet left the config
      // or (in a cluster) this daemon; the text cannot tell which, so it says both.
      out.push({ key, kind, change: 'closed', wallet: rest, text: `wallet ${rest}: its signer answers again, or the wallet is no longer this daemon's` });
    } else if (kind === 'wallet_stale' || kind === 'claim_in_doubt' || kind === 'claims_stalled') {
      out.push({ key, kind, change: 'closed', wallet: rest, text: `wallet ${rest} is no longer watched` });
    } else if (kind === 'epoch_refused') {
      out.push({ key, kind, change: 'closed', wallet: rest, text: `wallet ${rest}: its epoch is believed again` });
    }
  }
  return out;
}

/**
 * Logs each transition (error when an episode opens, info when it closes) and hands it to the
 * webhook, if any. Returns nothing and never throws: alerts must not disturb the daemon.
 */
export function reportAlerts(transitions: AlertTransition[], out: { logger: Logger; webhook?: WebhookNotifier }): void {
  for (const t of transitions) {
    const fields = {
      event: `alert.${t.change}`,
      alert: t.kind,
      wallet: t.wallet === '' ? undefined : t.wallet,
      step: t.step,
      plan: t.plan,
    } satisfies LogFields;
    if (t.change === 'opened') out.logger.error(fields, t.text);
    else out.logger.info(fields, t.text);
    out.webhook?.notify({
      key: `${t.key}:${t.change}`,
      event: `alert.${t.change}`,
      text: t.text,
      // The alert's own key on both notices: a channel that resolves (PagerDuty) closes what it opened.
      details: { alert: t.kind, wallet: fields.wallet, ...t.facts, step: t.step, plan: t.plan, alert_key: t.key, resolved: t.change === 'closed' },
    });
  }
}

/** What a notice about an unknown step names of it (the channels' Op, Symbol and Amount fields). */
function stepFacts(s: AlertInputs['unknownSteps'][number]): AlertTransition['facts'] {
  return { op: s.kind, symbol: s.symbol, ...(s.amountLamports === undefined ? {} : amountFields(s.kind, s.symbol, s.amountLamports)) };
}

function splitKey(key: string): [string, string | undefined] {
  const i = key.indexOf(':');
  return i < 0 ? [key, undefined] : [key.slice(0, i), key.slice(i + 1)];
}

function minutes(ms: number): string {
  const m = Math.floor(ms / 60_000);
  return m >= 120 ? `${Math.floor(m / 60)}h ${m % 60}m` : m >= 1 ? `${m}m` : `${Math.max(0, Math.floor(ms / 1000))}s`;
}
