// What daemons must agree on to share wallets, and what each one takes when they do not (SPEC §2:
// "a wallet every live daemon lists is always owned; daemons whose rules, safety or lease settings
// differ refuse to share wallets").
//
// Each daemon publishes with its heartbeat two digests: of its wallet list (walletsDigest, with the
// list itself whenever the digest changes) and of its *config* — the rules (by identity), the
// safety caps, the lease settings and the claim-gap settings (configDigest). A wallet moving
// between daemons whose rules differ is judged twice by different rules: a rule renamed on one host
// claimed again in an epoch its old name had already claimed in (issue 25, finding 7).
//
// The rule, for a daemon D at each lease round (planShare):
// 1. *Foreign* daemons are the live ones whose config digest differs from D's (or who publish none).
//    A wallet D lists that some foreign daemon lists too (or may list: its list is unknown) is
//    *contested*: D neither takes it nor keeps it (a held one is drained and handed back), and it
//    says so (`cluster.config_differs` at error, the `config_differs` alert, not ready). The
//    foreign daemon, running this same code, does the same: neither works a contested wallet, so no
//    wallet is ever worked under two configs, and none moves from one config to the other while
//    both are live. They are worked again once the configs agree or one side leaves. A wallet whose
//    last lease holder is a live foreign daemon is never acquired either (belt and braces: that
//    daemon lists it, or did a moment ago).
// 2. Among D's *group* (the live daemons with D's config, D included), the *common list* is the
//    intersection of the group's wallet lists, less the contested wallets; it is split by share.ts
//    exactly as one shared list would be. Every daemon of the group computes the same common list
//    from the same rows, so every commonly listed wallet is in exactly one daemon's share, and that
//    daemon lists it and takes it: a wallet every live daemon lists is always owned.
// 3. A wallet D lists that is not in the common list (some group member does not list it), and is
//    not contested: D keeps it if it holds it, and takes it once it has seen it free (no valid
//    lease) for a whole lease — a grace that lets its other listers' rounds go first without a
//    stampede; leases are exclusive either way, so two takers cannot both win.
// A wallet's own settings — `enabled`, the rules bound to it, what signs for it — are its *terms* (walletTerms),
// published with the wallet list (each entry `address#terms`): the config digest cannot cover them,
// since wallet lists may differ between daemons. A wallet D lists that a daemon of D's group lists
// under other terms is contested too, as in 1: otherwise a wallet switched off (or bound to a
// stricter rule) on one host was worked by another host that had it on, once the split moved it.
import { createHash } from 'node:crypto';
import type { KeySource, Rule, SafetyConfig, WalletConfig } from '../domain.js';
import { backendOf, isInProcess } from '../keys/backends/index.js';
import { PG_SCHEMA_VERSION } from '../store/postgres/migrations.js';
import { assignShares } from './share.js';

/** A rule's identity across hosts: its `id` (the name unless one is given), as plans key it. */
export function ruleIdentity(rule: Rule): string {
  return rule.id;
}

/** Everything daemons must agree on to share wallets. */
export interface ClusterConfig {
  rules: readonly Rule[];
  safety: SafetyConfig;
  /** state.lease and the manager's margin. */
  lease: { leaseMs: number; marginMs: number };
  /** cluster.max_clock_skew. */
  maxClockSkewMs: number;
  /**
   * api.claim_settle: when a claim is judged not applied, by whichever daemon holds the wallet then.
   * Not api.ts_window: its default is folded in here, and what else it bounds (how old a signed
   * request may grow before it goes out) is the sending daemon's own, judged by no other host.
   */
  claimSettleMs: number;
  /**
   * What the code means by shared state: the shared schema's version (default PG_SCHEMA_VERSION),
   * bumped with a migration whenever that meaning changes (schema-watch.ts). Two releases that
   * differ in it never share a wallet, whatever their settings; a release from before the
   * schema check would otherwise go on working wallets beside a newer one.
   */
  protocol?: number;
}

/** A short digest of the config, the same on every host that resolved the same settings. */
export function configDigest(c: ClusterConfig): string {
  const rules = [...c.rules]
    .map((r) => [ruleIdentity(r), r] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, r]) => ({ id, rule: r }));
  const canonical = JSON.stringify(
    {
      protocol: c.protocol ?? PG_SCHEMA_VERSION,
      rules,
      safety: c.safety,
      lease: c.lease,
      maxClockSkewMs: c.maxClockSkewMs,
      claimSettleMs: c.claimSettleMs,
      // Always null: the digest's canonical form as releases before this one publish it (a window
      // no daemon ever set). Left out, every digest would change, and hosts of two releases of one
      // schema would contest each other's wallets for a whole rolling upgrade.
      tsWindowMs: null,
    },
    sortedKeys,
  );
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

/**
 * A wallet's terms: what a daemon's config says about this one wallet beyond the shared rules —
 * whether it is switched off, which rules (by identity) apply to it, and what kind of signer signs. Equal on two hosts
 * exactly when they would judge the wallet alike.
 */
export function walletTerms(wallet: Pick<WalletConfig, 'rules'> & { enabled?: boolean | undefined; key?: KeySource }, rules: readonly Rule[]): string {
  // A name no rule carries is kept as a name (the config's cross-checks refuse it anyway).
  const bound = wallet.rules.map((name) => {
    const r = rules.find((x) => x.name === name);
    return r === undefined ? `name:${name}` : `id:${ruleIdentity(r)}`;
  });
  // What signs: a signer service, an HSM or a KMS may refuse by its own policy what a key held in
  // the daemon's memory signs for anyone; where the key is read from (file, env, credential) may
  // differ by host.
  const key = wallet.key === undefined ? undefined : isInProcess(wallet.key) ? 'in-process' : backendOf(wallet.key);
  const canonical = JSON.stringify({ enabled: wallet.enabled !== false, rules: [...new Set(bound)].sort(), key: key ?? null });
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

/** The wallet list as published (sql.ts heartbeat): each address with its terms, when known. */
export function publishedList(addresses: readonly string[], terms: ReadonlyMap<string, string> | undefined): string[] {
  return addresses.map((a) => {
    const t = terms?.get(a);
    return t === undefined ? a : `${a}#${t}`;
  });
}

/** A published list read back: the addresses, and the terms of those that carry them. */
export function readPublished(entries: readonly string[]): { addresses: string[]; terms: Map<string, string> } {
  const addresses: string[] = [];
  const terms = new Map<string, string>();
  for (const e of entries) {
    const at = e.lastIndexOf('#');
    const address = at < 0 ? e : e.slice(0, at);
    addresses.push(address);
    if (at >= 0) terms.set(address, e.slice(at + 1));
  }
  return { addresses, terms };
}

/** JSON with object keys sorted and bigints as text, so the digest does not depend on how an object was built. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A live daemon as this round read it. */
export interface Peer {
  id: string;
  /** Its config digest; undefined for a daemon that publishes none (an older autoclaim): foreign. */
  config: string | undefined;
  /** Its wallet list; undefined when not known (not published yet): constrains nothing, contests everything if foreign. */
  addresses: readonly string[] | undefined;
  /** The terms (walletTerms) it lists its wallets under; a wallet without is listed under none (an older autoclaim). */
  terms?: ReadonlyMap<string, string>;
}

export interface PlanInput {
  self: { id: string; config: string; addresses: readonly string[]; terms?: ReadonlyMap<string, string> };
  /** The live daemons, this one's row included or not. */
  live: readonly Peer[];
  /** Every lease row: its holder (even expired; undefined when free) and whether it is valid now. */
  leases: ReadonlyArray<{ address: string; owner: string | undefined; valid: boolean }>;
  /** Monotonic now, and the lease: how long a free extra wallet is watched before it is taken. */
  now: number;
  leaseMs: number;
  /** Since when each extra wallet has been seen free; updated in place (the caller keeps it across rounds). */
  freeSince: Map<string, number>;
}

export interface SharePlan {
  /** The wallets this daemon should hold now. */
  mine: Set<string>;
  /** Live daemons with another config, or listing a wallet of this one's under other terms (sorted ids). */
  foreign: string[];
  /** Wallets this daemon lists that a foreign daemon lists (or may), or a daemon lists under other terms: neither works them. */
  contested: Set<string>;
  /** Wallets that no foreign live daemon was the last to hold: the only ones this daemon may acquire. */
  mayAcquire: (address: string) => boolean;
}

export function planShare(input: PlanInput): SharePlan {
  const { self } = input;
  const others = input.live.filter((p) => p.id !== self.id);
  const foreignPeers = others.filter((p) => p.config !== self.config);
  const group = [self, ...others.filter((p) => p.config === self.config)];
  const mineListed = new Set(self.addresses);

  const contested = new Set<string>();
  for (const p of foreignPeers) {
    if (p.addresses === undefined) {
      for (const a of mineListed) contested.add(a);
      break;
    }
    for (const a of p.addresses) if (mineListed.has(a)) contested.add(a);
  }
  // The same config, but a wallet of both lists under other terms: contested as well (see above).
  const otherTerms = new Set<string>();
  for (const p of others) {
    if (p.config !== self.config || p.addresses === undefined) continue;
    for (const a of p.addresses) {
      if (!mineListed.has(a) || p.terms?.get(a) === self.terms?.get(a)) continue;
      contested.add(a);
      otherTerms.add(p.id);
    }
  }
  const candidates = [...mineListed].filter((a) => !contested.has(a));
  const lists = group.filter((p) => p.addresses !== undefined && p.id !== self.id).map((p) => new Set(p.addresses));
  const common = candidates.filter((a) => lists.every((l) => l.has(a)));

  const owners = new Map<string, string>();
  const lastHolder = new Map<string, string>();
  for (const l of input.leases) {
    if (l.owner === undefined) continue;
    lastHolder.set(l.address, l.owner);
    if (l.valid) owners.set(l.address, l.owner);
  }
  const shares = assignShares({ live: group.map((p) => p.id), addresses: common, owners });
  const mine = new Set(shares.get(self.id) ?? []);

  const commonSet = new Set(common);
  const seenFree = new Set<string>();
  for (const a of candidates) {
    if (commonSet.has(a)) continue;
    const owner = owners.get(a);
    if (owner === self.id) {
      mine.add(a);
      continue;
    }
    const liveOwner = owner !== undefined && input.live.some((p) => p.id === owner);
    if (liveOwner) continue;
    seenFree.add(a);
    const since = input.freeSince.get(a) ?? input.now;
    input.freeSince.set(a, since);
    if (input.now - since >= input.leaseMs) mine.add(a);
  }
  for (const a of [...input.freeSince.keys()]) if (!seenFree.has(a)) input.freeSince.delete(a);

  const foreignIds = new Set(foreignPeers.map((p) => p.id));
  return {
    mine,
    foreign: [...new Set([...foreignIds, ...otherTerms])].sort(),
    contested,
    mayAcquire: (address) => {
      const holder = lastHolder.get(address);
      return holder === undefined || !foreignIds.has(holder);
    },
  };
}
