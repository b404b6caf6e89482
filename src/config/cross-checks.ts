// Checks that need more than one value at a time: names that refer to each other, amounts against
// the safety cap, steps against the steps before them, templates against what can fill them.
// Errors make the config invalid; warnings are things that load but are probably not meant.
// Each check is one entry of CROSS_CHECKS, run in order by one loop, all of them every time: a new
// check is one more entry. They run after the schema even when it refused parts of the file; what
// it refused was set aside (salvage.ts) and every check skips it, so none reports a stand-in.
import { formatSol } from '../amount.js';
import { TEMPLATE_VARIABLES, runTogether, templateVariables } from '../api/endpoints.js';
import type { AppConfig, Condition, Rule, SignedOp } from '../domain.js';
import { formatPath } from '../json.js';
import { settleAfterMs, windowMarginMs } from '../api/ts-window.js';
import { movesSol, unitsOf } from '../rules/amounts.js';
import { formatDuration } from '../rules/format.js';
import { nextCronTimes } from './cron.js';
import type { IssueList, Path } from './positions.js';
import type { ResolveContext } from './resolve.js';
import { isSetAside } from './salvage.js';

/** A fixed instant for schedule arithmetic, so a warning does not depend on when `check` ran. */
const REFERENCE_TIME = new Date(Date.UTC(2025, 0, 6, 0, 0, 0));

/** One cross-field check: reports into ctx.issues, never throws for a problem in the file. */
type CrossCheck = (config: AppConfig, ctx: ResolveContext) => void;

const CROSS_CHECKS: ReadonlyArray<{ name: string; check: CrossCheck }> = [
  { name: 'unique names', check: uniqueNames },
  { name: 'rules named by wallets exist', check: walletRuleReferences },
  { name: 'rule steps and limits', check: ruleSteps },
  { name: 'signed message templates', check: endpointTemplates },
  { name: 'answer statuses mean one thing', check: answerStatuses },
  { name: 'one endpoint per operation', check: distinctEndpoints },
  { name: 'schedule against jitter and rate limit', check: scheduleLoad },
  { name: 'some rule', check: noRules },
  { name: 'sandbox settings used', check: sandboxIgnored },
  { name: 'claim settle against the timestamp window', check: claimSettle },
];

/**
 * A daemon paused (GC, SIGSTOP, a frozen VM) after recording a claim may send it when it wakes,
 * after the claim was judged; the service refuses that request only once its timestamp is older
 * than api.ts_window. A claim is judged "not applied" (and signed again) after api.claim_settle, so
 * a claim_settle shorter than the window plus its margin leaves room for two claims. With shared
 * state another daemon takes the wallet over while this one is paused, so it is refused; alone, a
 * pause holds the daemon's own reconciliation too, and it is a warning.
 */
function claimSettle(config: AppConfig, ctx: ResolveContext): void {
  const needed = settleAfterMs(config.api.tsWindowMs);
  if (config.api.claimSettleMs >= needed) return;
  const text = `api.claim_settle (${formatDuration(config.api.claimSettleMs)}) is shorter than api.ts_window + ${formatDuration(windowMarginMs(config.api.tsWindowMs))} (${formatDuration(needed)}): a claim judged not applied before its first request can no longer be accepted may be applied twice; leave claim_settle unset (it is then ${formatDuration(needed)})`;
  if (config.state.url !== undefined) ctx.issues.error(['api', 'claim_settle'], `with shared state (state.url), ${text}`);
  else ctx.issues.warn(['api', 'claim_settle'], text);
}

export function crossCheck(config: AppConfig, ctx: ResolveContext): void {
  for (const { check } of CROSS_CHECKS) check(config, ctx);
}

function ruleSteps(config: AppConfig, ctx: ResolveContext): void {
  config.rules.forEach((rule, i) => {
    if (!isSetAside(ctx.setAside, ['rules', i])) checkRule(rule, i, config, ctx);
  });
}

function noRules(config: AppConfig, ctx: ResolveContext): void {
  if (config.rules.length === 0 && !isSetAside(ctx.setAside, ['rules'])) ctx.issues.warn(['rules'], 'no rules: autoclaim will watch the wallets and never act');
}

function sandboxIgnored(config: AppConfig, ctx: ResolveContext): void {
  if (isSetAside(ctx.setAside, ['api'])) return;
  if (config.api.baseUrl !== 'sandbox' && ctx.source.has(['sandbox'])) {
    ctx.issues.warn(['sandbox'], 'ignored: the simulator only runs with api.base_url: sandbox');
  }
}

function uniqueNames(config: AppConfig, ctx: ResolveContext): void {
  const dup = (what: string, values: string[], base: 'wallets' | 'rules', field: string): void => {
    const first = new Map<string, number>();
    values.forEach((v, i) => {
      if (isSetAside(ctx.setAside, [base, i])) return;
      const earlier = first.get(v);
      if (earlier === undefined) first.set(v, i);
      else {
        // The first may be in the other file (the config or its wallets_file): then name it.
        const { source } = ctx;
        const there = source.position([base, earlier, field]);
        const where = source.fileOf(there) === source.fileOf(source.position([base, i, field])) ? 'line' : `${source.fileOf(there)} line`;
        ctx.issues.error([base, i, field], `duplicate ${what} "${v}" (also ${base}[${earlier}], ${where} ${there.line})`);
      }
    });
  };
  dup('wallet name', config.wallets.map((w) => w.name), 'wallets', 'name');
  dup('wallet address', config.wallets.map((w) => w.address), 'wallets', 'address');
  dup('rule name', config.rules.map((r) => r.name), 'rules', 'name');
  // Plans and limits are keyed by id (its name unless set): two rules must not share one.
  const firstId = new Map<string, number>();
  config.rules.forEach((r, i) => {
    if (isSetAside(ctx.setAside, ['rules', i])) return;
    const earlier = firstId.get(r.id);
    if (earlier === undefined) firstId.set(r.id, i);
    else if (config.rules[earlier]?.name !== r.name) {
      const field = ctx.source.has(['rules', i, 'id']) ? 'id' : 'name';
      ctx.issues.error(['rules', i, field], `duplicate rule id "${r.id}" (also rules[${earlier}]): plans and limits are keyed by it`);
    }
  });
}

function walletRuleReferences(config: AppConfig, ctx: ResolveContext): void {
  const { issues, setAside } = ctx;
  const ruleNames = new Set(config.rules.filter((_, i) => !setAside.rules.has(i)).map((r) => r.name));
  // A wallet without its own list names every rule, the stand-ins among them.
  const standIns = new Set(config.rules.filter((_, i) => setAside.rules.has(i)).map((r) => r.name));
  const used = new Set<string>();
  config.wallets.forEach((w, i) => {
    if (setAside.wallets.has(i)) return;
    const seen = new Set<string>();
    w.rules.forEach((name, j) => {
      used.add(name);
      // A rule the schema refused, or a refused list of rules, cannot be looked up: not judged.
      if (setAside.ruleNames.has(name) || standIns.has(name) || isSetAside(setAside, ['rules'])) return;
      if (!ruleNames.has(name)) {
        // As written: a set-aside rule by the name it was given, if it had one.
        const written = new Map([...setAside.ruleNames].map(([n, k]) => [k, n]));
        const known = config.rules.flatMap((r, k) => (setAside.rules.has(k) ? (written.has(k) ? [written.get(k) ?? ''] : []) : [r.name]));
        issues.error(
          ['wallets', i, 'rules', j],
          `no rule named "${name}"${known.length ? `; rules are: ${known.join(', ')}` : '; no rules are defined'}`,
        );
      } else if (seen.has(name)) {
        issues.warn(['wallets', i, 'rules', j], `rule "${name}" is listed twice`);
      }
      seen.add(name);
    });
  });
  // A wallet set aside may have used any rule.
  if (setAside.wallets.size > 0 || isSetAside(setAside, ['wallets'])) return;
  config.rules.forEach((r, i) => {
    if (!setAside.rules.has(i) && !used.has(r.name)) issues.warn(['rules', i, 'name'], `rule "${r.name}" is used by no wallet`);
  });
}

// ------------------------------------------------------------------------------------------------
// rules

function checkRule(rule: Rule, i: number, config: AppConfig, ctx: ResolveContext): void {
  const { issues } = ctx;
  const base: Path = ['rules', i];
  const maxAction = config.safety.maxLamportsPerAction;
  const capKnown = !isBroken(ctx, ['safety', 'max_sol_per_action']);
  const cap = `safety.max_sol_per_action (${formatSol(maxAction)} SOL)`;

  if (rule.when.length === 0) {
    issues.warn(
      [...base, 'name'],
      rule.limits.oncePerEpoch
        ? `rule "${rule.name}" has no conditions: it fires for every wallet every epoch`
        : `rule "${rule.name}" has no conditions: it fires on every poll`,
    );
  } else if (!rule.limits.oncePerEpoch && !rule.limits.cooldownMs && rule.limits.maxPlansPerDay === undefined) {
    // (A cooldown of 0s holds nothing back: it counts as none.)
    issues.warn(
      [...base, 'limits', 'once_per_epoch'],
      'with once_per_epoch false and no cooldown or max_plans_per_day, the rule fires on every poll while its conditions hold',
    );
  }
  impossibleConditions(rule.when, [...base, 'when'], issues);

  let claimAt: number | undefined;
  let sharePpm = 0;
  let allTaken = false;
  // The fixed amounts count against max_sol_per_day besides the claim (rules/amounts.ts planDayLamports).
  let fixedSum = 0n;
  let stepAboveDay = false;
  rule.do.forEach((s, j) => {
    const at: Path = [...base, 'do', j];
    if (s.kind === 'claim') {
      if (claimAt !== undefined) issues.error(at, `a plan claims once; step ${claimAt + 1} already claims`);
      claimAt ??= j;
      return;
    }
    const amountPath: Path = [...at, s.kind, 'amount'];
    if (isBroken(ctx, amountPath)) return;
    const a = s.amount;
    if (a.kind === 'fixed') {
      // The per-action cap bounds a withdraw's shares and a burn's tokens as a number too (nothing
      // else bounds one); the day caps count SOL only (rules/amounts.ts movesSol).
      if (capKnown && a.lamports > maxAction) {
        issues.error(amountPath, `${formatSol(a.lamports)} ${unitsOf(s)} is above ${cap}; this step would always be refused`);
      }
      if (!movesSol(s.kind)) return;
      fixedSum += a.lamports;
      const perDay = rule.limits.maxLamportsPerDay;
      if (perDay !== undefined && !isBroken(ctx, [...base, 'limits', 'max_sol_per_day']) && perDay < a.lamports) {
        stepAboveDay = true;
        issues.warn(
          [...base, 'limits', 'max_sol_per_day'],
          `${formatSol(perDay)} SOL a day is less than the ${formatSol(a.lamports)} SOL step ${j + 1} moves`,
        );
      }
      return;
    }
    const what = a.kind === 'all' ? '"all"' : `${a.ppm / 10_000}%`;
    if (!movesSol(s.kind)) {
      // A claim receives SOL; a withdraw takes vault shares, a burn the token's units (SPEC §1:
      // the amount is what the wallet gives up). A share of the claim would sign lamports as shares.
      const noun = s.kind === 'withdraw' ? 'shares' : 'tokens';
      issues.error(amountPath, `a ${s.kind} takes ${unitsOf(s)}, not SOL: ${what} of the SOL claimed is no amount of ${noun}; write the number of ${noun}, e.g. amount: 1.5`);
      return;
    }
    if (claimAt === undefined) {
      issues.error(amountPath, `${what} is a share of what this plan claimed, but no claim comes before this step`);
      return;
    }
    if (allTaken) {
      issues.error(amountPath, `an earlier step already moves "all" of the claim; nothing is left for this one`);
      return;
    }
    if (a.kind === 'all') {
      if (sharePpm > 0) issues.error(amountPath, `"all" of the claim plus the ${sharePpm / 10_000}% before it is more than the claim`);
      allTaken = true;
      return;
    }
    sharePpm += a.ppm;
    if (sharePpm > 1_000_000) {
      issues.error(amountPath, `the steps after the claim add up to ${sharePpm / 10_000}% of it, more than it received`);
    }
  });

  const perDay = rule.limits.maxLamportsPerDay;
  if (perDay !== undefined && fixedSum > 0n && !stepAboveDay && !isBroken(ctx, [...base, 'limits', 'max_sol_per_day'])) {
    if (claimAt === undefined ? fixedSum > perDay : fixedSum >= perDay) {
      issues.warn(
        [...base, 'limits', 'max_sol_per_day'],
        claimAt === undefined
          ? `${formatSol(perDay)} SOL a day is less than the ${formatSol(fixedSum)} SOL its fixed steps move together: the rule can never fire`
          : `${formatSol(perDay)} SOL a day leaves nothing to claim besides the ${formatSol(fixedSum)} SOL its fixed steps move: the rule can never fire`,
      );
    }
  }

  // The cap counts SOL (rules/amounts.ts movesSol); a rule that only withdraws and burns moves
  // none, and an operator who wrote the cap to bound its burns had no such bound.
  if (perDay !== undefined && rule.do.every((s) => s.kind === 'withdraw' || s.kind === 'burn') && !isBroken(ctx, [...base, 'limits', 'max_sol_per_day'])) {
    issues.warn(
      [...base, 'limits', 'max_sol_per_day'],
      "counts SOL, and this rule moves none (a withdraw's vault shares and a burn's tokens are not SOL): it bounds nothing; bound the rule with max_plans_per_day or cooldown",
    );
  }

  if (claimAt !== undefined && capKnown) {
    for (const c of rule.when) {
      if (c.field !== 'pending_sol' || (c.op !== 'gte' && c.op !== 'gt' && c.op !== 'eq')) continue;
      const path = [...base, 'when', 'pending_sol', c.op];
      if (!isBroken(ctx, path) && c.value > maxAction) {
        issues.warn(path, `every claim this rule makes is above ${cap} and will be refused`);
      }
    }
  }
}

/** Bounds that exclude each other (gte 2 with lte 1) make a rule that can never fire. */
function impossibleConditions(when: Condition[], base: Path, issues: IssueList): void {
  for (const field of ['pending_sol', 'lifetime_sol', 'rank'] as const) {
    let low: bigint | undefined;
    let high: bigint | undefined;
    for (const c of when) {
      if (c.field !== field || c.op === 'in' || c.op === 'ne') continue;
      const v = BigInt(c.value);
      const lo = c.op === 'gt' ? v + 1n : c.op === 'gte' || c.op === 'eq' ? v : undefined;
      const hi = c.op === 'lt' ? v - 1n : c.op === 'lte' || c.op === 'eq' ? v : undefined;
      if (lo !== undefined && (low === undefined || lo > low)) low = lo;
      if (hi !== undefined && (high === undefined || hi < high)) high = hi;
    }
    if (low !== undefined && high !== undefined && low > high) {
      issues.warn([...base, field], 'these conditions exclude each other: the rule can never fire');
    }
  }
}

// ------------------------------------------------------------------------------------------------
// api and schedule

type TemplateNeeds = { required: string[]; recommended: string[]; unavailable: string[] };
// {epoch} and {op} can fill any template, so they are in no list. An op that moves an amount
// (deposit, mint, and any added later such as withdraw and burn) needs what it moves signed.
const CLAIM_NEEDS: TemplateNeeds = { required: ['wallet', 'ts'], recommended: [], unavailable: ['symbol', 'amount'] };
const AMOUNT_NEEDS: TemplateNeeds = { required: ['amount', 'symbol'], recommended: ['wallet', 'ts'], unavailable: [] };

function endpointTemplates(config: AppConfig, ctx: ResolveContext): void {
  const { issues } = ctx;
  for (const op of Object.keys(config.api.endpoints) as SignedOp[]) {
    const path: Path = ['api', 'endpoints', op, 'message'];
    if (isSetAside(ctx.setAside, path)) continue;
    const used = templateVariables(config.api.endpoints[op].message);
    const unknown = used.filter((v) => !(TEMPLATE_VARIABLES as readonly string[]).includes(v));
    const { required, recommended, unavailable } = op === 'claim' ? CLAIM_NEEDS : AMOUNT_NEEDS;
    const missing = required.filter((v) => !used.includes(v));
    const cannot = used.filter((v) => unavailable.includes(v));
    const known = TEMPLATE_VARIABLES.map((v) => `{${v}}`).join(' ');
    for (const v of unknown) issues.error(path, `unknown placeholder {${v}}; placeholders are ${known}`);
    for (const v of cannot) issues.error(path, `a ${op} has no {${v}} to sign`);
    if (missing.length > 0) {
      issues.error(path, `the ${op} message must include ${missing.map((v) => `{${v}}`).join(' and ')}`);
    }
    // A warning: the server's messages are not the operator's to change (signer.yaml refuses it).
    for (const pair of runTogether(config.api.endpoints[op].message)) {
      issues.warn(path, `${pair} run together, so one ${op} message can be read as another amount or symbol (ETH2 5 and ETH 25 both sign "ETH25")`);
    }
    const weak = recommended.filter((v) => !used.includes(v));
    if (weak.length > 0) {
      issues.warn(path, `without ${weak.map((v) => `{${v}}`).join(' and ')}, a captured ${op} signature could be replayed`);
    }
  }
}

/**
 * A status listed as applied and as refused (compared as answers are, without case) is read as
 * refused (executor/answer.ts): the step goes back to be signed again, though the operator wrote
 * that the server applied it. Either list may be the default one.
 */
function answerStatuses(config: AppConfig, ctx: ResolveContext): void {
  for (const op of Object.keys(config.api.endpoints) as SignedOp[]) {
    const { applied, refused } = config.api.endpoints[op];
    const base: Path = ['api', 'endpoints', op];
    if (isSetAside(ctx.setAside, [...base, 'applied']) || isSetAside(ctx.setAside, [...base, 'refused'])) continue;
    const inRefused = new Set(refused.map((s) => s.toLowerCase()));
    const givenApplied = ctx.source.has([...base, 'applied']);
    const givenRefused = ctx.source.has([...base, 'refused']);
    applied.forEach((status, k) => {
      if (!inRefused.has(status.toLowerCase())) return;
      const at: Path = givenApplied ? [...base, 'applied', k] : [...base, 'refused', refused.findIndex((r) => r.toLowerCase() === status.toLowerCase())];
      const which = givenApplied === givenRefused ? '' : givenApplied ? ' (refused by default)' : ' (applied by default)';
      ctx.issues.error(
        at,
        `"${status}" is both an applied and a refused status${which}: an answer saying it would count as refused and the ${op} be sent again; list it in one of the two`,
      );
    });
  }
}

/**
 * The body names no operation (api/signed-request.ts) and deposit, mint, withdraw and burn sign the
 * same message: two operations at one method and path are one to the server, so a rule's deposit
 * sent to mint's path would be a mint. Compared without case or a trailing slash.
 */
function distinctEndpoints(config: AppConfig, ctx: ResolveContext): void {
  const first = new Map<string, SignedOp>();
  for (const op of Object.keys(config.api.endpoints) as SignedOp[]) {
    const { method, path } = config.api.endpoints[op];
    const key = `${method} ${path.replace(/\/+$/, '').toLowerCase()}`;
    const other = first.get(key);
    if (other === undefined) {
      first.set(key, op);
      continue;
    }
    const at: Path = ctx.source.has(['api', 'endpoints', op, 'path']) ? ['api', 'endpoints', op, 'path'] : ['api', 'endpoints', other, 'path'];
    if (isSetAside(ctx.setAside, at)) continue;
    ctx.issues.error(at, `${other} and ${op} are both ${method} ${path}: the request names no operation, so the server would take one for the other; give each its own path`);
  }
}

function scheduleLoad(config: AppConfig, ctx: ResolveContext): void {
  // A command that does not poll on the schedule (`once`) does not pay for its fire times.
  if (!ctx.scheduled) return;
  if (ctx.issues.errors.some((e) => e.path === 'schedule.poll') || isSetAside(ctx.setAside, ['schedule', 'poll'])) return;
  const times = nextCronTimes(config.schedule.poll, REFERENCE_TIME, 6, { utc: true });
  if (times.length === 0) {
    ctx.issues.error(['schedule', 'poll'], 'this schedule never fires');
    return;
  }
  if (times.length < 2) return;
  let gap = Infinity;
  for (let k = 1; k < times.length; k++) gap = Math.min(gap, (times[k]?.getTime() ?? 0) - (times[k - 1]?.getTime() ?? 0));
  const jitter = config.schedule.jitterMs;
  if (jitter >= gap && !isSetAside(ctx.setAside, ['schedule', 'jitter'])) {
    ctx.issues.warn(
      ['schedule', 'jitter'],
      `${formatDuration(jitter)} of jitter is not less than the ${formatDuration(gap)} between polls; polls will bunch up or be skipped`,
    );
  }
  const perMinute = (config.wallets.length * 60_000) / gap;
  if (perMinute > config.api.rateLimit.perMinute && !isSetAside(ctx.setAside, ['api', 'rate_limit', 'per_minute'])) {
    ctx.issues.warn(
      ['schedule', 'poll'],
      `polling ${config.wallets.length} wallet(s) every ${formatDuration(gap)} needs ${Math.ceil(perMinute)} reads a minute, ` +
        `above api.rate_limit.per_minute (${config.api.rateLimit.perMinute})`,
    );
  }
}

function isBroken(ctx: ResolveContext, path: Path): boolean {
  return ctx.broken.has(formatPath(path));
}
