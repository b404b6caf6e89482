// What `check` prints: the config as an operator would describe it, so a misread rule shows up
// before it moves money. Names where keys are, never key material.
import { formatSol } from '../amount.js';
import type { AppConfig, Condition, KeySource, Rule, SignedOp } from '../domain.js';
import { describeStep, formatDuration } from '../rules/format.js';
import { nextCronTimes } from './cron.js';
import { apiKeySource, describeApiKeySource, type ApiKeyOptions } from './secrets.js';

interface SummaryOptions extends ApiKeyOptions {
  /** With the environment, the summary names the API key source that will actually be used. */
  env?: NodeJS.ProcessEnv;
}

export function summarizeConfig(config: AppConfig, now: Date, opts: SummaryOptions = {}): string {
  const out: string[] = [];
  const row = (label: string, value: string) => out.push(`${label.padEnd(9)} ${value}`);

  row('config', config.file);
  if (config.api.baseUrl === 'sandbox') {
    const perSec = formatSol(config.sandbox.accrualLamportsPerSec);
    row('api', `sandbox: the simulator, in-process (epoch ${formatDuration(config.sandbox.epochMs)}, ${perSec} SOL a second per wallet)`);
  } else {
    row('api', config.api.baseUrl);
  }
  row('api key', apiKeyLine(config, opts));
  row('state', config.state.path);
  const zone = config.schedule.timezone === undefined ? '' : ` in ${config.schedule.timezone}`;
  row('schedule', `${config.schedule.poll}${zone} (+ up to ${formatDuration(config.schedule.jitterMs)} jitter per wallet)`);
  const next = nextCronTimes(config.schedule.poll, now, 3, { timezone: config.schedule.timezone });
  row('', `next polls: ${next.length > 0 ? next.map((d) => d.toISOString()).join(', ') : 'none'}`);
  row('safety', `at most ${formatSol(config.safety.maxLamportsPerAction)} SOL per action`);
  if (config.metrics.listen) row('metrics', `http://${config.metrics.listen}/metrics`);
  describeSigning(config.api).forEach((line, i) => row(i === 0 ? 'signing' : '', line));

  out.push('', `wallets (${config.wallets.length})`);
  const nameWidth = Math.max(...config.wallets.map((w) => w.name.length), 4);
  for (const w of config.wallets) {
    const rules = w.rules.length > 0 ? w.rules.join(', ') : 'none (watched only)';
    out.push(`  ${w.name.padEnd(nameWidth)}  ${w.address}  key: ${describeKey(w.key)}  rules: ${rules}`);
  }

  out.push('', `rules (${config.rules.length})`);
  for (const r of config.rules) out.push(...describeRule(r).map((line, i) => (i === 0 ? `  ${line}` : `    ${line}`)));
  return out.join('\n');
}

/** Said wherever the claim message is shown (`check`, `doctor`). */
const CLAIM_MESSAGE_NOTE =
  'the service does not publish the claim message; confirm it with the service (`autoclaim doctor` shows the exact claim, unsent)';

/**
 * How signed requests are built: what an operator compares with the service's documentation when
 * a first claim is refused. A wrong header prefix or template is a 401, never a claim.
 */
function describeSigning(api: AppConfig['api']): string[] {
  const p = api.headerPrefix;
  const out = [
    `Ed25519 over the UTF-8 message, signature encoded ${api.signatureEncoding}`,
    `headers: authorization: Bearer <API key>, ${p}-ts: <Unix seconds, the {ts} signed>, ${p}-wallet: <wallet address>`,
  ];
  const ops = Object.keys(api.endpoints) as SignedOp[];
  const opWidth = Math.max(...ops.map((op) => op.length));
  const routes = ops.map((op) => `${api.endpoints[op].method} ${api.endpoints[op].path}`);
  const routeWidth = Math.max(...routes.map((r) => r.length));
  ops.forEach((op, i) => {
    out.push(`${op.padEnd(opWidth)}  ${(routes[i] ?? '').padEnd(routeWidth)}  signs ${api.endpoints[op].message}`);
  });
  out.push(`note: ${CLAIM_MESSAGE_NOTE}`);
  return out;
}

function apiKeyLine(config: AppConfig, opts: SummaryOptions): string {
  if (opts.env) return describeApiKeySource(apiKeySource(config, opts.env, opts));
  const order = ['$AUTOCLAIM_API_KEY'];
  if (config.api.apiKeyFile) order.push(`file ${config.api.apiKeyFile}`);
  order.push('systemd credential api_key');
  return order.join(', else ');
}

function describeKey(key: KeySource): string {
  if ('file' in key) return `file ${key.file}`;
  if ('env' in key) return `env ${key.env}`;
  if ('credential' in key) return `systemd credential ${key.credential}`;
  if ('pkcs11' in key) return `pkcs11 token ${key.pkcs11.token}, key ${key.pkcs11.label ?? `id ${key.pkcs11.id ?? ''}`}`;
  if ('vault' in key) return `vault ${key.vault.address} ${key.vault.mount}/${key.vault.key}`;
  if ('aws_kms' in key) return `aws_kms ${key.aws_kms.keyId} (${key.aws_kms.region})`;
  return `signer service ${key.signer.socket}, key ${key.signer.key}`;
}

const FIELD_WORDS: Record<Condition['field'], string> = {
  pending_sol: 'pending rewards',
  lifetime_sol: 'lifetime rewards',
  rank: 'rank',
  tier: 'tier',
};
const OP_WORDS: Record<Condition['op'], string> = {
  gt: 'above',
  gte: 'at least',
  lt: 'below',
  lte: 'at most',
  eq: 'exactly',
  ne: 'not',
  in: 'one of',
};

function describeRule(rule: Rule): string[] {
  const when =
    rule.when.length === 0 ? 'always (no conditions)' : `when ${rule.when.map(describeCondition).join(' and ')}`;
  const steps = rule.do.map(describeStep).join(', then ');
  const limits: string[] = [];
  if (rule.limits.oncePerEpoch) limits.push('at most once per epoch');
  if (rule.limits.cooldownMs !== undefined) limits.push(`cooldown ${formatDuration(rule.limits.cooldownMs)}`);
  if (rule.limits.maxPlansPerDay !== undefined) limits.push(`at most ${rule.limits.maxPlansPerDay} plan(s) a day`);
  if (rule.limits.maxLamportsPerDay !== undefined) {
    limits.push(`at most ${formatSol(rule.limits.maxLamportsPerDay)} SOL claimed a day`);
  }
  return [`${rule.name}: ${when}: ${steps}`, limits.length > 0 ? limits.join('; ') : 'no limits'];
}

function describeCondition(c: Condition): string {
  const value = (v: unknown): string => {
    if (typeof v === 'bigint') return `${formatSol(v)} SOL`;
    if (Array.isArray(v)) return `[${v.map(value).join(', ')}]`;
    return String(v);
  };
  const verb = c.field === 'rank' || c.field === 'tier' ? 'is' : 'are';
  return `${FIELD_WORDS[c.field]} ${verb} ${OP_WORDS[c.op]} ${value(c.value)}`;
}
