import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { AppConfig } from '../../src/domain.js';
import { BASE, TempDir, edit, formatted } from './helpers.js';
import { DEFAULT_APPLIED_STATUSES, DEFAULT_REFUSED_STATUSES } from '../../src/api/endpoints.js';

const ANSWERS = { applied: DEFAULT_APPLIED_STATUSES, refused: DEFAULT_REFUSED_STATUSES };

const FULL = `# every option
api:
  base_url: https://rewards.example.com/v1/
  header_prefix: X-Acme
  timeout_ms: 8000
  connect_timeout_ms: 2000
  max_response_bytes: 65536
  connections: 2
  rate_limit: { per_minute: 120, burst: 10 }
  endpoints:
    claim: { path: /rewards/claim-now }
    mint: { method: PUT, message: "{ts}:{wallet}:{symbol}:{amount}", applied: [Done, queued], refused: [] }
  signature_encoding: hex
  api_key_file: secrets/api_key
  auth_reads: false
  read_attempts: 1
state:
  path: ../state/ac.db
schedule:
  poll: "0 */5 * * * *"
  jitter: 1m30s
  timezone: Europe/Paris
wallets:
  - name: treasury
    address: FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf
    key: { file: keys/treasury.json }
    rules: [compound]
  - name: ops
    address: Crs71UyAv56yeSVraCRocDCGB9ZD8m3CZAVY672CPRya
    key: { env: OPS_SECRET }
  - name: savings
    address: wPmnEd9Vf2DHQFTWhy1xB97ZMCaXS8GaV6dQzxaL7T8
    key: { credential: savings_key }
    rules: []
rules:
  - name: compound
    when:
      pending_sol: { gte: 0.123456789, lt: "1000" }
      lifetime_sol: { in: [1e-9, "2.5", 3] }
      rank: { lte: 10, ne: 3 }
      tier: { in: [gold, platinum] }
    do:
      - claim
      - deposit: { symbol: SOL2X, amount: "12.3456%" }
      - mint: { symbol: JLP, amount: "0.5" }
      - deposit: { symbol: SOL3X, amount: 0.25 }
    limits:
      once_per_epoch: false
      cooldown: 6h
      max_plans_per_day: 4
      max_sol_per_day: 25.000000001
  - name: sweep
    when:
      tier: { eq: diamond }
    do: [claim, { deposit: { symbol: SOL2X, amount: all } }]
safety:
  max_sol_per_action: 100.5
metrics:
  listen: 127.0.0.1:9464
alerts:
  stale_after_intervals: 5
  unknown_step_after: 1h
  webhook: { events: [failures, acknowledged] }
log:
  level: debug
`;

describe('a valid config', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
    mkdirSync(join(dir.path, 'etc'));
  });
  afterEach(() => dir.remove());

  it('resolves to the exact AppConfig: lamports as bigint, ms, absolute paths', () => {
    dir.write('etc/autoclaim.yaml', FULL);
    const result = loadConfig('etc/autoclaim.yaml', { env: { STATE_DIRECTORY: '/ignored' }, cwd: dir.path });
    expect(formatted(result)).toEqual({ errors: [], warnings: [] });
    const expected: AppConfig = {
      file: join(dir.path, 'etc/autoclaim.yaml'),
      api: {
        baseUrl: 'https://rewards.example.com/v1',
        headerPrefix: 'x-acme',
        timeoutMs: 8000,
        connectTimeoutMs: 2000,
        maxResponseBytes: 65536,
        connections: 2,
        rateLimit: { perMinute: 120, burst: 10 },
        endpoints: {
          claim: { method: 'POST', path: '/rewards/claim-now', message: '{wallet}|{ts}', ...ANSWERS },
          deposit: { method: 'POST', path: '/actions/deposit', message: '{wallet}|{symbol}|{amount}|{ts}', ...ANSWERS },
          mint: { method: 'PUT', path: '/actions/mint', message: '{ts}:{wallet}:{symbol}:{amount}', applied: ['Done', 'queued'], refused: [] },
          withdraw: { method: 'POST', path: '/actions/withdraw', message: '{wallet}|{symbol}|{amount}|{ts}', ...ANSWERS },
          burn: { method: 'POST', path: '/actions/burn', message: '{wallet}|{symbol}|{amount}|{ts}', ...ANSWERS },
        },
        signatureEncoding: 'hex',
        apiKeyFile: join(dir.path, 'etc/secrets/api_key'),
        authReads: false,
        readAttempts: 1,
        tsWindowMs: 300_000,
        claimSettleMs: 360_000,
      },
      state: { path: join(dir.path, 'state/ac.db'), url: undefined, passwordFile: undefined, leaseMs: 15_000, queryTimeoutMs: 10_000 },
      schedule: { poll: '0 */5 * * * *', jitterMs: 90_000, timezone: 'Europe/Paris' },
      wallets: [
        {
          name: 'treasury',
          address: 'FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf',
          key: { file: join(dir.path, 'etc/keys/treasury.json') },
          rules: ['compound'],
        },
        {
          name: 'ops',
          address: 'Crs71UyAv56yeSVraCRocDCGB9ZD8m3CZAVY672CPRya',
          key: { env: 'OPS_SECRET' },
          rules: ['compound', 'sweep'],
        },
        {
          name: 'savings',
          address: 'wPmnEd9Vf2DHQFTWhy1xB97ZMCaXS8GaV6dQzxaL7T8',
          key: { credential: 'savings_key' },
          rules: [],
        },
      ],
      rules: [
        {
          name: 'compound',
          id: 'compound',
          when: [
            { field: 'pending_sol', op: 'gte', value: 123_456_789n },
            { field: 'pending_sol', op: 'lt', value: 1_000_000_000_000n },
            { field: 'lifetime_sol', op: 'in', value: [1n, 2_500_000_000n, 3_000_000_000n] },
            { field: 'rank', op: 'lte', value: 10 },
            { field: 'rank', op: 'ne', value: 3 },
            { field: 'tier', op: 'in', value: ['gold', 'platinum'] },
          ],
          do: [
            { kind: 'claim' },
            { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'percent', ppm: 123_456 } },
            { kind: 'mint', symbol: 'JLP', amount: { kind: 'fixed', lamports: 500_000_000n } },
            { kind: 'deposit', symbol: 'SOL3X', amount: { kind: 'fixed', lamports: 250_000_000n } },
          ],
          limits: {
            oncePerEpoch: false,
            cooldownMs: 6 * 3_600_000,
            maxPlansPerDay: 4,
            maxLamportsPerDay: 25_000_000_001n,
          },
        },
        {
          name: 'sweep',
          id: 'sweep',
          when: [{ field: 'tier', op: 'eq', value: 'diamond' }],
          do: [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'all' } }],
          limits: { oncePerEpoch: true, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
        },
      ],
      safety: { maxLamportsPerAction: 100_500_000_000n, maxLamportsPerWalletPerDay: undefined },
      sandbox: { epochMs: 60_000, accrualLamportsPerSec: 833_333n },
      metrics: { listen: '127.0.0.1:9464', perWallet: 'auto' },
      cluster: { maxClockSkewMs: 5_000 },
      alerts: {
        staleAfterIntervals: 5,
        unknownStepAfterMs: 3_600_000,
        clockSkewMs: 30_000,
        webhookEvents: ['rejected', 'failed', 'unknown', 'anomaly', 'config_invalid', 'stale', 'unknown_step', 'epoch_refused', 'acknowledged'],
        webhookExpireMs: 86_400_000,
        webhookTimeoutMs: 10_000,
        webhookAllowLinkLocal: false,
        webhookMinSeverity: 'info',
        channels: [],
      },
      log: { level: 'debug' },
    };
    expect(result.config).toStrictEqual(expected);
  });

  it('fills the defaults of a minimal config', () => {
    dir.write('config.yaml', BASE);
    const config = dir.load('config.yaml').config;
    expect(config?.api).toStrictEqual({
      baseUrl: 'http://127.0.0.1:8787/v1',
      headerPrefix: 'x-svc',
      timeoutMs: 10_000,
      connectTimeoutMs: 5_000,
      maxResponseBytes: 1024 * 1024,
      connections: 16,
      rateLimit: { perMinute: 500, burst: 100 },
      endpoints: {
        claim: { method: 'POST', path: '/rewards/claim', message: '{wallet}|{ts}', ...ANSWERS },
        deposit: { method: 'POST', path: '/actions/deposit', message: '{wallet}|{symbol}|{amount}|{ts}', ...ANSWERS },
        mint: { method: 'POST', path: '/actions/mint', message: '{wallet}|{symbol}|{amount}|{ts}', ...ANSWERS },
        withdraw: { method: 'POST', path: '/actions/withdraw', message: '{wallet}|{symbol}|{amount}|{ts}', ...ANSWERS },
        burn: { method: 'POST', path: '/actions/burn', message: '{wallet}|{symbol}|{amount}|{ts}', ...ANSWERS },
      },
      signatureEncoding: 'base58',
      apiKeyFile: undefined,
      authReads: true,
      readAttempts: 3,
      tsWindowMs: 300_000,
      claimSettleMs: 360_000,
    });
    expect(config?.schedule).toStrictEqual({ poll: '*/1 * * * *', jitterMs: 10_000, timezone: undefined });
    expect(config?.alerts.webhookEvents).toEqual(['rejected', 'failed', 'unknown', 'anomaly', 'config_invalid', 'stale', 'unknown_step', 'epoch_refused']);
    expect(config?.rules[0]?.limits).toStrictEqual({
      oncePerEpoch: true,
      cooldownMs: undefined,
      maxPlansPerDay: undefined,
      maxLamportsPerDay: undefined,
    });
    expect(config?.wallets[0]?.rules).toEqual(['compound']);
    expect(config?.metrics).toStrictEqual({ listen: undefined, perWallet: 'auto' });
    expect(config?.log).toStrictEqual({ level: 'info' });
    expect(config?.sandbox).toStrictEqual({ epochMs: 60_000, accrualLamportsPerSec: 833_333n });
  });

  it('puts the state under $STATE_DIRECTORY (its first entry), else ./var under cwd', () => {
    dir.write('config.yaml', BASE);
    expect(dir.load('config.yaml', { STATE_DIRECTORY: '/var/lib/autoclaim:/var/lib/other' }).config?.state.path).toBe(
      '/var/lib/autoclaim/autoclaim.db',
    );
    expect(dir.load('config.yaml', {}).config?.state.path).toBe(join(dir.path, 'var/autoclaim.db'));
  });

  it('reads amounts from the YAML text, not from the float YAML makes of them', () => {
    const amounts: Array<[string, bigint]> = [
      ['0.123456789', 123_456_789n],
      ['12345678.123456789', 12_345_678_123_456_789n], // as a float this would be ...790
      ['"0.5"', 500_000_000n],
      ['1e-9', 1n],
      ['.5', 500_000_000n],
      ['18446744073.709551615', 18_446_744_073_709_551_615n],
      ['0.30000000000000000', 300_000_000n],
    ];
    for (const [text, lamports] of amounts) {
      dir.write('config.yaml', edit(BASE, '{ gte: 0.5 }', `{ gte: ${text} }`));
      const result = dir.load('config.yaml');
      expect(result.errors).toEqual([]);
      expect(result.config?.rules[0]?.when[0]).toEqual({ field: 'pending_sol', op: 'gte', value: lamports });
    }
  });
});

describe('warnings: loads, but probably not what was meant', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(() => dir.remove());

  const cases: Array<{ name: string; yaml: string; warnings: string[] }> = [
    {
      name: 'a rule with no conditions',
      yaml: edit(BASE, '    when:\n      pending_sol: { gte: 0.5 }\n', ''),
      warnings: ['config.yaml:8:5 rules[0].name: rule "compound" has no conditions: it fires for every wallet every epoch'],
    },
    {
      name: 'a rule no wallet uses',
      yaml: edit(BASE, '{ file: ./keys/treasury.json }', '{ file: ./keys/treasury.json }\n    rules: []'),
      warnings: ['config.yaml:9:5 rules[0].name: rule "compound" is used by no wallet'],
    },
    {
      name: 'a daily cap below a fixed step',
      yaml: edit(BASE, 'amount: "50%" }', 'amount: 2 }\n    limits: { max_sol_per_day: 1 }'),
      warnings: ['config.yaml:14:15 rules[0].limits.max_sol_per_day: 1 SOL a day is less than the 2 SOL step 2 moves'],
    },
    {
      name: 'a daily cap that the fixed steps fill, before anything claimed',
      yaml: edit(BASE, 'amount: "50%" }', 'amount: 0.5 }\n      - mint: { symbol: SOL5X, amount: 0.5 }\n    limits: { max_sol_per_day: 1 }'),
      warnings: ['config.yaml:15:15 rules[0].limits.max_sol_per_day: 1 SOL a day leaves nothing to claim besides the 1 SOL its fixed steps move: the rule can never fire'],
    },
    {
      // Shares and tokens are not SOL: a withdraw and a burn neither fill max_sol_per_day nor
      // exceed it (helper 34); warnings are none, where SOL steps of 2 and 2 would warn twice.
      name: 'a withdraw and a burn under a small daily SOL cap',
      yaml: edit(BASE, '      - deposit: { symbol: SOL2X, amount: "50%" }', '      - withdraw: { symbol: SOL2X, amount: 2 }\n      - burn: { symbol: SOL5X, amount: 2 }\n    limits: { max_sol_per_day: 1 }'),
      warnings: [],
    },
    {
      // The cap counts SOL; a rule that only withdraws and burns moves none, so the operator who
      // wrote it to bound the burns had no bound but the rule's others (helper h29e).
      name: 'a daily SOL cap on a rule that moves no SOL',
      yaml: edit(BASE, '      - claim\n      - deposit: { symbol: SOL2X, amount: "50%" }', '      - burn: { symbol: SOL5X, amount: 2 }\n    limits: { max_sol_per_day: 1 }'),
      warnings: [
        "config.yaml:13:15 rules[0].limits.max_sol_per_day: counts SOL, and this rule moves none (a withdraw's vault shares and a burn's tokens are not SOL): it bounds nothing; bound the rule with max_plans_per_day or cooldown",
      ],
    },
    {
      name: 'a threshold above the safety cap',
      yaml: edit(BASE, '{ gte: 0.5 }', '{ gte: 500 }'),
      warnings: [
        'config.yaml:10:22 rules[0].when.pending_sol.gte: every claim this rule makes is above safety.max_sol_per_action (100 SOL) and will be refused',
      ],
    },
    {
      name: 'conditions that exclude each other',
      yaml: edit(BASE, '{ gte: 0.5 }', '{ gt: 2, lt: 1 }'),
      warnings: ['config.yaml:10:7 rules[0].when.pending_sol: these conditions exclude each other: the rule can never fire'],
    },
    {
      // Without the option this is an error (test/config/base-url.test.ts).
      name: 'plain http to a remote host, explicitly allowed',
      yaml: edit(BASE, 'http://127.0.0.1:8787/v1', 'http://rewards.example.com/v1\n  allow_insecure_http: true'),
      warnings: [
        'config.yaml:2:3 api.base_url: plain http to rewards.example.com, which is not this machine, sends the API key and signatures unencrypted (allowed by api.allow_insecure_http); use https',
      ],
    },
    {
      name: 'metrics listening beyond this host',
      yaml: `${BASE}metrics:\n  listen: 0.0.0.0:9464\n`,
      warnings: ['config.yaml:17:3 metrics.listen: the metrics endpoint has no authentication and listens beyond this host'],
    },
    {
      name: 'a sandbox section without the sandbox',
      yaml: `${BASE}sandbox:\n  epoch: 2m\n`,
      warnings: ['config.yaml:16:1 sandbox: ignored: the simulator only runs with api.base_url: sandbox'],
    },
    {
      name: 'jitter as long as the poll interval',
      yaml: `${BASE}schedule:\n  poll: "*/2 * * * * *"\n  jitter: 2s\n`,
      warnings: [
        'config.yaml:18:3 schedule.jitter: 2s of jitter is not less than the 2s between polls; polls will bunch up or be skipped',
      ],
    },
    {
      name: 'once_per_epoch off with nothing else limiting',
      yaml: edit(BASE, 'amount: "50%" }', 'amount: "50%" }\n    limits: { once_per_epoch: false }'),
      warnings: [
        'config.yaml:14:15 rules[0].limits.once_per_epoch: with once_per_epoch false and no cooldown or max_plans_per_day, the rule fires on every poll while its conditions hold',
      ],
    },
    {
      name: 'a signed message an attacker could replay',
      yaml: edit(BASE, '  base_url: http://127.0.0.1:8787/v1\n', '  base_url: http://127.0.0.1:8787/v1\n  endpoints: { deposit: { message: "{symbol}|{amount}" } }\n'),
      warnings: [
        'config.yaml:3:27 api.endpoints.deposit.message: without {wallet} and {ts}, a captured deposit signature could be replayed',
      ],
    },
    {
      name: 'a signed message whose amount runs into its symbol',
      yaml: edit(BASE, '  base_url: http://127.0.0.1:8787/v1\n', '  base_url: http://127.0.0.1:8787/v1\n  endpoints: { deposit: { message: "{wallet}|{symbol}{amount}|{ts}" } }\n'),
      warnings: [
        'config.yaml:3:27 api.endpoints.deposit.message: {symbol}{amount} run together, so one deposit message can be read as another amount or symbol (ETH2 5 and ETH 25 both sign "ETH25")',
      ],
    },
  ];

  it.each(cases)('$name', ({ yaml, warnings }) => {
    dir.write('config.yaml', yaml);
    const result = dir.load('config.yaml');
    expect(formatted(result)).toEqual({ errors: [], warnings });
    expect(result.config).toBeDefined();
  });

  it('warns when polling needs more reads than the rate limit allows', () => {
    const yaml = `${BASE}schedule:\n  poll: "* * * * * *"\n  jitter: 0s\n`;
    const base = 'base_url: http://127.0.0.1:8787/v1';
    dir.write('config.yaml', edit(yaml, base, `${base}\n  rate_limit: { per_minute: 30 }`));
    expect(formatted(dir.load('config.yaml')).warnings).toEqual([
      'config.yaml:18:3 schedule.poll: polling 1 wallet(s) every 1s needs 60 reads a minute, above api.rate_limit.per_minute (30)',
    ]);
  });

  it('for a command that does not poll on the schedule (once), checks the expression but not its fire times', () => {
    const busy = edit(`${BASE}schedule:\n  poll: "*/2 * * * * *"\n  jitter: 2s\n`, 'v1\n', 'v1\n  rate_limit: { per_minute: 1 }\n');
    dir.write('busy.yaml', busy);
    dir.write('never.yaml', `${BASE}schedule:\n  poll: "0 0 0 L-30 2 *"\n`);
    dir.write('broken.yaml', `${BASE}schedule:\n  poll: "0 70 * * *"\n`);
    const scheduled = (name: string, on: boolean) => formatted(loadConfig(name, { env: {}, cwd: dir.path, scheduled: on }));
    expect(scheduled('busy.yaml', true).warnings).toHaveLength(2);
    expect(scheduled('busy.yaml', false)).toEqual({ errors: [], warnings: [] });
    expect(scheduled('never.yaml', true).errors).toEqual(['never.yaml:17:3 schedule.poll: this schedule never fires']);
    expect(scheduled('never.yaml', false)).toEqual({ errors: [], warnings: [] });
    expect(scheduled('broken.yaml', false).errors).toHaveLength(1);
  });
});

describe('anchors, aliases, merge keys, tags and directives', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(() => dir.remove());

  it('are refused at their place: a config is plain data', () => {
    const shared = `rules:
  - &base
    name: base
    when: { lifetime_sol: { gte: 1 } }
    do: [claim]
  - <<: *base
    name: merged
`;
    const yaml = edit(edit(BASE, 'rules:\n', shared), 'max_sol_per_action: 100', 'max_sol_per_action: !!str 100');
    dir.write('config.yaml', `%YAML 1.2\n---\n${yaml}`);
    const errors = formatted(dir.load('config.yaml')).errors;
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^config\.yaml:1:1: a %YAML directive is not supported/),
        expect.stringMatching(/^config\.yaml:10:5 rules\[0\]: anchor &base: anchors and aliases are not supported/),
        expect.stringMatching(/^config\.yaml:14:5 rules\[1\]\["<<"\]: merge keys \(<<\) are not supported/),
        expect.stringMatching(/^config\.yaml:14:9 rules\[1\]\["<<"\]: alias \*base: anchors and aliases are not supported/),
        expect.stringMatching(/^config\.yaml:\d+:\d+ safety\.max_sol_per_action: a tag \(!…\) is not supported/),
      ]),
    );
    expect(errors).toHaveLength(5);
  });
});
