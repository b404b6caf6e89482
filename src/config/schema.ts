// The one schema of the config file. It validates shape and types (strict: an unknown key is an
// error), carries the defaults and descriptions, and is what `autoclaim schema` exports. Values
// that need the YAML source text or the rest of the file (amounts, durations, paths, names that
// refer to each other) are converted and checked afterwards, in resolve.ts and cross-checks.ts.
// The shared value types are in schema-fields.ts, the rules section in schema-rules.ts.
import { z } from 'zod';
import { Duration, name, posInt, SOL_MESSAGE, SolAmount, whenMissing, whenPresent } from './schema-fields.js';
import { Rule } from './schema-rules.js';
import { Channel, EventNames, MinSeverity } from './schema-alerts.js';
import { KeySource } from './schema-keys.js';
import { runbookBaseProblem } from './runbook-url.js';

const LISTEN_MESSAGE = 'expected HOST:PORT or a bare port, e.g. 127.0.0.1:9464 or 9464';

// ------------------------------------------------------------------------------------------------
// api

const answerStatus = z
  .string()
  .regex(/^\S(.*\S)?$/, { error: 'expected a status word such as "success", without surrounding spaces' })
  .max(64);

const Endpoint = z
  .strictObject({
    method: z.enum(['POST', 'PUT']).optional().describe('HTTP method (default POST)'),
    path: z
      .string()
      .regex(/^\/[^\s{}?#]*$/, { error: 'expected a path starting with "/", without placeholders, query or fragment' })
      .optional()
      .describe('relative to api.base_url, e.g. /rewards/claim'),
    message: z
      .string()
      .min(1)
      .optional()
      .describe('signed message template; placeholders {wallet} {ts} {epoch} {symbol} {amount} {op}'),
    applied: z
      .array(answerStatus)
      .min(1)
      .optional()
      .describe('answer statuses that mean the server applied the request (default success, submitted, claimed, ok)'),
    refused: z
      .array(answerStatus)
      .optional()
      .describe('answer statuses that mean the server refused it (default failed, rejected, error); any other status is unknown'),
  })
  .describe('overrides merged over the default endpoint');

const BASE_URL_MESSAGE = 'expected an http(s) URL ending in the version prefix (e.g. https://host/v1), or "sandbox"';
const Api = z
  .strictObject({
    base_url: z
      .union([z.literal('sandbox'), z.string().regex(/^https?:\/\/\S+$/, { error: BASE_URL_MESSAGE })], {
        error: (iss) =>
          iss.input === undefined
            ? 'required: the API URL ending in its version prefix (e.g. https://host/v1), or "sandbox"'
            : BASE_URL_MESSAGE,
      })
      .describe('API URL ending in its version prefix (e.g. https://host/v1); "sandbox" runs the simulator in-process'),
    allow_insecure_http: z
      .boolean()
      .default(false)
      .describe(
        'allow a plain http:// base_url to a host other than this machine (the API key and signatures then cross the network unencrypted); a warning instead of an error',
      ),
    header_prefix: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9-]*$/, { error: 'expected a header name prefix like x-svc' })
      .default('x-svc')
      .describe('prefix of the -ts and -wallet headers on signed requests'),
    timeout_ms: posInt().max(600_000).default(10_000).describe('headers and body timeout per request, ms'),
    connect_timeout_ms: posInt().max(120_000).default(5_000).describe('TCP/TLS connect timeout, ms'),
    max_response_bytes: posInt()
      .max(64 * 1024 * 1024)
      .default(1024 * 1024)
      .describe('a larger response body is refused'),
    // One per wallet turn in flight (the daemon's concurrency, 16): a turn never waits for a socket
    // while another's answer is read. 8 left the server idle whenever the daemon paused (a batch of
    // poll records, a collection).
    connections: posInt().max(256).default(16).describe('HTTP connections kept to the API'),
    rate_limit: z
      .strictObject({
        per_minute: posInt().default(500).describe('requests per minute (the service publishes 500)'),
        burst: posInt().default(100).describe('requests allowed at once (the service publishes 100)'),
      })
      .prefault({})
      .describe('client-side rate limiter'),
    endpoints: z
      .strictObject({
        claim: Endpoint.optional(),
        deposit: Endpoint.optional(),
        mint: Endpoint.optional(),
        withdraw: Endpoint.optional(),
        burn: Endpoint.optional(),
      })
      .optional()
      .describe('method, path and signed message of each signed operation'),
    signature_encoding: z.enum(['base58', 'base64', 'hex']).default('base58').describe('encoding of the Ed25519 signature'),
    api_key_file: z
      .string()
      .min(1)
      .optional()
      .describe('file holding the API key (mode 0600); used when $AUTOCLAIM_API_KEY is not set'),
    auth_reads: z.boolean().default(true).describe('send the API key on reads too, when one is set'),
    read_attempts: posInt().max(10).default(3).describe('tries per read request in all (1 = no retry)'),
    ts_window: Duration.default('5m').describe(
      "how far from the service's clock a signed timestamp is still accepted (the service's replay window); when unsure, longer is safer",
    ),
    claim_settle: Duration.optional().describe(
      "a claim whose answer was lost counts as not applied (and is sent again) only once its signed timestamp is this old by the state store's clock; default ts_window + 1m (+ ts_window when shorter than 1m), after which no copy of it can be accepted. With state.url, shorter is refused",
    ),
  })
  .describe('the rewards-and-vaults API');

// ------------------------------------------------------------------------------------------------
// wallets

/** One wallet: an entry of `wallets:`, and a line of wallets_file. */
export const WalletSchema = z.strictObject({
  name: name('wallet').describe('unique name used in logs and commands'),
  address: z
    .string()
    .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, { error: 'expected a base58 public key' })
    .describe('base58 public key; must equal the address of the key'),
  key: KeySource,
  rules: z.array(name('rule')).optional().describe('rules applied to this wallet (default: all rules)'),
  enabled: z
    .boolean()
    .default(true)
    .describe('false: the wallet is still polled and its rules decided in dry mode and reported, but nothing is signed for it (a kill switch)'),
});

// ------------------------------------------------------------------------------------------------
// the file

export const ConfigSchema = z
  .strictObject(
    {
      api: Api,
      state: z
        .strictObject({
          path: z
            .string()
            .min(1)
            .optional()
            .describe('SQLite file (default $STATE_DIRECTORY/autoclaim.db, else ./var/autoclaim.db)'),
          url: z
            .string()
            .min(1)
            .optional()
            .describe(
              'PostgreSQL state shared by several daemons, postgres://user@host:port/db ($AUTOCLAIM_STATE_URL wins); no password here: PGPASSWORD, state.password_file or the credential state_password',
            ),
          password_file: z.string().min(1).optional().describe('mode-0600 file holding the PostgreSQL password (with state.url)'),
          lease: Duration.default('15s').describe('how long a daemon holds a wallet unless it renews (with state.url); renewed every third of it'),
          query_timeout: Duration.default('10s').describe(
            'deadline of every PostgreSQL query (with state.url): the server ends it (statement_timeout) and the client gives up a moment later; a transaction gets three',
          ),
        })
        .optional(),
      cluster: z
        .strictObject({
          max_clock_skew: Duration.default('5s').describe(
            "with state.url: how far this machine's clock may stray from the database's (measured at every lease round) before the daemon stops signing until it is back",
          ),
        })
        .prefault({})
        .describe('several daemons on one PostgreSQL state (state.url)'),
      schedule: z
        .strictObject({
          poll: z
            .string()
            .default('*/1 * * * *')
            .describe('node-cron expression, 5 or 6 fields (seconds first when 6)'),
          jitter: Duration.default('10s').describe('random delay added to each poll, per wallet'),
          timezone: z
            .string()
            .min(1)
            .optional()
            .describe('IANA time zone the poll fields are read in, e.g. Europe/Paris or UTC (default: the system time zone)'),
        })
        .prefault({}),
      // Neither is required alone, and either may be empty when the other is not: at least one
      // wallet in all is checked where both are known (wallets-file.ts).
      wallets: z.array(WalletSchema).describe('the wallets to watch and act for').optional(),
      wallets_file: z
        .string()
        .min(1)
        .optional()
        .describe(
          'JSON Lines file of more wallets, one wallets entry per line ("#" comments and blank lines skipped), listed after those of wallets; relative key paths in it are relative to it',
        ),
      rules: z.array(Rule).default([]).describe('what to do when'),
      safety: z
        .strictObject(
          {
            max_sol_per_action: z
              .union(SolAmount.options, {
                error: (iss) =>
                  iss.input === undefined
                    ? 'required: the most SOL one step may move; autoclaim never defaults a money limit'
                    : SOL_MESSAGE,
              })
              .describe('a step moving more SOL than this is refused and logged; required'),
            max_sol_per_wallet_per_day: z
              .union(SolAmount.options, { error: whenPresent(SOL_MESSAGE) })
              .optional()
              .describe(
                "SOL one wallet address's plans may count for in any 24 hours, all rules together (as a rule's max_sol_per_day counts); no wallet-level cap when absent",
              ),
            paused: z
              .boolean()
              .default(false)
              .describe(
                'true: the kill switch: every wallet is still polled, its rules decided in dry mode and reported, and nothing is signed (`autoclaim pause` does the same on a running daemon)',
              ),
          },
          {
            error: whenMissing(
              'required: autoclaim moves money and never guesses a limit; add safety: { max_sol_per_action: <SOL> }',
            ),
          },
        )
        .describe('hard limits'),
      sandbox: z
        .strictObject({
          epoch: Duration.default('1m').describe('length of a simulated epoch'),
          accrual_sol_per_min: SolAmount.default('0.05').describe('SOL each wallet accrues per minute (kept to the lamport per second, rounded down)'),
        })
        .prefault({})
        .describe('the in-process simulator (only with base_url: sandbox)'),
      metrics: z
        .strictObject({
          listen: z
            .union(
              [
                z.int().min(1).max(65535).describe('a port on 127.0.0.1'),
                z
                  .string()
                  .regex(/^(?:(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):)?[0-9]{1,5}$/, { error: LISTEN_MESSAGE })
                  .describe('HOST:PORT, or a port on 127.0.0.1'),
              ],
              { error: whenPresent(LISTEN_MESSAGE) },
            )
            .optional()
            .describe('HOST:PORT of the health and Prometheus endpoint, or a bare port (meaning 127.0.0.1:PORT); off when absent'),
          per_wallet: z
            .union([z.literal('auto'), z.boolean()])
            .default('auto')
            .describe('series labelled by wallet: auto = up to 100 wallets, aggregates only beyond; true = always; false = never'),
        })
        .optional(),
      alerts: z
        .strictObject({
          stale_after_intervals: z
            .int()
            .min(1)
            .default(3)
            .describe("a wallet without a successful poll for this many of its times between polls (the poll interval; longer when the fleet outgrows the rate budget and the planner spaces each wallet's turns) is reported stale (error log, webhook); no successful poll of any wallet for this many poll intervals fails /readyz"),
          unknown_step_after: Duration.default('15m').describe('an unknown step open longer than this is reported (error log, webhook)'),
          unclaimed_after: Duration.optional().describe(
            "a wallet whose pending has grown with no claim applied for this long is reported (claims_stalled: a rule that cannot fire, a pause forgotten); off when absent, as a rule's own threshold may rightly wait days",
          ),
          clock_skew: Duration.default('30s').describe("warn when the server's Date differs from our clock by more than this"),
          runbook_base_url: z
            .string()
            .refine((t) => runbookBaseProblem(t) === undefined, { error: (i) => runbookBaseProblem(String(i.input)) ?? 'expected an absolute URL' })
            .optional()
            .describe(
              "the URL of autoclaim's docs directory (where operations.md is), for the runbook link every notice carries; default: from package.json's homepage, else the installed docs/ as a file:// URL",
            ),
          webhook: z
            .strictObject({
              events: EventNames,
              min_severity: MinSeverity.default('info'),
              expire_after: Duration.default('24h').describe('a failure notice not delivered by then is dropped (it waits in the state database until delivered, retried with backoff)'),
              timeout: Duration.default('10s').describe('one POST, answer headers and body included, must finish within this; it is cut there and retried later'),
              allow_link_local: z
                .boolean()
                .default(false)
                .describe('accept a webhook URL on a link-local address (169.254.0.0/16, fe80::/10), cloud metadata endpoints included; refused by default'),
            })
            .prefault({})
            .describe('the webhook; its URL and signing secret are secrets: $AUTOCLAIM_WEBHOOK_URL / $AUTOCLAIM_WEBHOOK_SECRET or the systemd credentials webhook_url / webhook_secret'),
          channels: z
            .array(Channel)
            .default([])
            .describe('Slack, Discord, Telegram, e-mail and PagerDuty, each with its own min_severity and events; they share the webhook\'s outbox, expire_after and redaction'),
        })
        .prefault({})
        .describe('when to raise alerts; the webhook URL is a secret: $AUTOCLAIM_WEBHOOK_URL or the systemd credential webhook_url'),
      log: z
        .strictObject({
          level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
        })
        .prefault({}),
    },
    { error: whenPresent('expected a map of settings (api, wallets, rules, safety, ...)') },
  )
  .meta({
    title: 'autoclaim configuration',
    description: 'Watches wallet rewards and claims and compounds them by rules. Secrets never live in this file.',
    // Each branch names its property itself: Ajv's strict mode (strictRequired) refuses a
    // `required` whose property is defined only in a parent schema.
    anyOf: [
      { properties: { wallets: true }, required: ['wallets'] },
      { properties: { wallets_file: true }, required: ['wallets_file'] },
    ],
  });

/** What the schema hands to resolve.ts: snake_case, defaults filled, amounts still as written. */
export type RawConfig = z.output<typeof ConfigSchema>;
export type RawRule = RawConfig['rules'][number];
export type RawWallet = NonNullable<RawConfig['wallets']>[number];
export type RawStep = RawRule['do'][number];

