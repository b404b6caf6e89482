// The last step of the config pipeline, for `check`, `run`, `once` and a reload alike: every
// wallet's key is loaded (by src/keys/keys.ts) and compared with its address, and the API key and
// the webhook secret are read where they are allowed to be. A problem becomes a ConfigIssue at its
// place, the wallet's `key:` for a wallet key, in the same list as the schema's and the
// cross-field checks' problems, so one run of `check` shows everything there is to fix.
import type { AppConfig } from '../domain.js';
import { ConfigError, KeyError } from '../errors.js';
import { formatPath } from '../json.js';
import type { Redactor } from '../log/redact.js';
import { isInProcess, openSigner } from '../keys/backends/index.js';
import { loadKey } from '../keys/keys.js';
import { templatesOf } from '../keys/message.js';
import type { WalletSigner } from '../keys/port.js';
import type { IssueList, Path } from './positions.js';
import type { ResolveContext } from './resolve.js';
import { isSetAside } from './salvage.js';
import { apiKeySource, channelSecretSources, resolveApiKey, resolveChannelSecret, resolveWebhookSecret } from './secrets.js';
import { resolveWebhookUrl, webhookUrlProblem } from './webhook-url.js';

export interface KeyCheckOptions {
  /** Every secret is registered with it as it is read, before anything can go wrong. */
  redactor: Redactor;
  /**
   * Runs before any key is read, on a config whose api.base_url is "sandbox" (and was not set
   * aside): writes the public demo keys (src/sandbox/demo.ts). Kept out of config/ on purpose.
   */
  prepareSandbox?: (config: AppConfig) => void;
}

/** What the key check read, for a config without errors. */
export interface LoadedSecrets {
  /** By address: a wallet is its address, and a key signs only for the address it derives. */
  signers: Map<string, WalletSigner>;
  apiKey: string | undefined;
  webhookSecret: string | undefined;
}

export function checkKeys(config: AppConfig, ctx: ResolveContext, opts: KeyCheckOptions): LoadedSecrets {
  const { env, issues } = ctx;
  const credentialsDir = env.CREDENTIALS_DIRECTORY;
  if (config.api.baseUrl === 'sandbox' && !isSetAside(ctx.setAside, ['api'])) opts.prepareSandbox?.(config);

  const signers = new Map<string, WalletSigner>();
  const templates = templatesOf(config.api.endpoints);
  config.wallets.forEach((w, i) => {
    if (isSetAside(ctx.setAside, ['wallets', i])) return;
    const at: Path = ['wallets', i, 'key'];
    const keyOpts = { env, credentialsDir, baseDir: ctx.configDir, redactor: opts.redactor };
    try {
      // An address already refused has no key that could match it: the key is read (its own
      // problems reported), not compared, and one message is enough.
      if (ctx.broken.size > 0 && ctx.broken.has(formatPath(['wallets', i, 'address']))) {
        if (isInProcess(w.key)) loadKey(w.key, keyOpts);
        return;
      }
      // In-process keys are loaded and checked now; a remote backend's key when it connects (runtime.ts).
      signers.set(w.address, openSigner(w.key, w.address, w.name, { ...keyOpts, templates }));
    } catch (err) {
      if (!(err instanceof KeyError)) throw err;
      // Named as well as placed: in a fleet the name is what the operator searches for.
      issues.error(at, `wallet ${w.name}: ${err.message}`);
    }
  });

  const apiKey = checkApiKey(config, ctx, opts);
  let webhookSecret: string | undefined;
  try {
    webhookSecret = resolveWebhookSecret(env, { credentialsDir });
    if (webhookSecret !== undefined) opts.redactor.add(webhookSecret);
  } catch (err) {
    if (!(err instanceof KeyError)) throw err;
    fileIssue(issues, err.message);
  }
  checkWebhookUrl(config, ctx, opts);
  checkChannelSecrets(config, ctx, opts);
  return { signers, apiKey, webhookSecret };
}

/**
 * Signed requests need the bearer: against a real API, a config without one is refused rather than
 * sending every claim to be refused with a 401. The sandbox makes up its own key. A key that is set
 * but unusable (too short, unreadable) is refused even where none is needed.
 */
function checkApiKey(config: AppConfig, ctx: ResolveContext, opts: KeyCheckOptions): string | undefined {
  if (isSetAside(ctx.setAside, ['api'])) return undefined;
  const { env, issues } = ctx;
  const credentialsDir = env.CREDENTIALS_DIRECTORY;
  let key: string | undefined;
  try {
    key = resolveApiKey(config, env, { credentialsDir });
  } catch (err) {
    if (!(err instanceof KeyError) && !(err instanceof ConfigError)) throw err;
    const message = err instanceof ConfigError ? err.issues.map((i) => i.message).join('; ') : err.message;
    if (apiKeySource(config, env, { credentialsDir }).kind === 'file') issues.error(['api', 'api_key_file'], message);
    else fileIssue(issues, message);
    return undefined;
  }
  if (key !== undefined) opts.redactor.add(key);
  if (key === undefined && config.api.baseUrl !== 'sandbox' && config.wallets.length > 0) {
    issues.error(['api'], 'no API key: set $AUTOCLAIM_API_KEY, api.api_key_file, or the systemd credential api_key (signed requests need it)');
  }
  return key;
}

/**
 * The webhook URL (a secret: registered before anything else is done with it) against the rules of
 * webhook-url.ts. The message names where it came from, never the URL.
 */
function checkWebhookUrl(config: AppConfig, ctx: ResolveContext, opts: KeyCheckOptions): void {
  const source = resolveWebhookUrl(ctx.env);
  if (source === undefined) return;
  opts.redactor.add(source.url);
  const problem = source.unreadable ?? webhookUrlProblem(source.url, config.alerts.webhookAllowLinkLocal);
  if (problem !== undefined) fileIssue(ctx.issues, `the webhook URL from ${source.what} ${problem}`);
}

/**
 * Every channel's secrets (alerts.channels) read where the config says they are and registered
 * with the redactor; a Slack or Discord URL checked as the webhook's is. Placed at the secret's key.
 */
function checkChannelSecrets(config: AppConfig, ctx: ResolveContext, opts: KeyCheckOptions): void {
  config.alerts.channels.forEach((c, i) => {
    if (isSetAside(ctx.setAside, ['alerts', 'channels', i])) return;
    for (const [key, source] of channelSecretSources(c)) {
      const at: Path = ['alerts', 'channels', i, key];
      try {
        const value = resolveChannelSecret(source, `channel ${c.name}'s ${key}`, ctx.env);
        opts.redactor.add(value);
        const problem = key === 'url' ? webhookUrlProblem(value, c.allowLinkLocal) : undefined;
        if (problem !== undefined) ctx.issues.error(at, `channel ${c.name}: the URL ${problem}`);
      } catch (err) {
        if (!(err instanceof KeyError)) throw err;
        ctx.issues.error(at, err.message);
      }
    }
  });
}

/** A problem with something the file does not hold (an environment variable, a credential). */
function fileIssue(issues: IssueList, message: string): void {
  issues.errorAt({ line: 0, col: 0 }, [], message);
}
