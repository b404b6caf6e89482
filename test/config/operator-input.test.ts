// Operator input, a hostile review (helper 40; docs/reliability.md): spellings a YAML reader may take
// for something else, look-alike and invisible characters, statuses that mean two things. Each
// hole found is a case here that failed before its fix; the attacks that held are pinned too:
// refused at file:line:col with the key's path, or read as a careful reader of the file reads them.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveApiKey } from '../../src/config/index.js';
import { describeFailure } from '../../src/cli/errors.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { formatIssue, KeyError } from '../../src/errors.js';
import { thrown } from '../support/errors.js';
import { loadSignerConfig } from '../../src/signer/config.js';
import { signerSetup } from '../signer/support.js';
import { BASE, TempDir, apiKeyConfigs, edit, formatted } from './helpers.js';

const CAP = 'max_sol_per_action: 100';
const WHEN = 'pending_sol: { gte: 0.5 }';
const API = '  base_url: http://127.0.0.1:8787/v1';
const withLimits = (limits: string) => edit(BASE, '    do:', `    limits: ${limits}\n    do:`);
const withEndpoint = (line: string) => edit(BASE, API, `${API}\n  endpoints:\n    ${line}`);
const NOT_ASCII =
  'written with an invisible or non-ASCII character in it (a look-alike letter, a zero-width, non-breaking or padding space, a tab); retype it';
const TIER = 'a tier is 1 to 64 letters, digits, spaces, "_", ".", "+" or "-" as the service writes it, e.g. Gold';

interface Hole {
  name: string;
  yaml: string;
  errors: string[];
}

const HOLES: Hole[] = [
  {
    // 8 to a YAML 1.1 reader, 10 to the daemon: the cap was higher than the reviewer read.
    name: 'a cap with a leading zero',
    yaml: edit(BASE, CAP, 'max_sol_per_action: 010'),
    errors: [
      'config.yaml:15:3 safety.max_sol_per_action: 010 has a leading zero, which YAML 1.1 reads as octal (8) and YAML 1.2 as decimal (10): write the number without it, or quote it if it is text',
    ],
  },
  {
    name: 'a count with a leading zero',
    yaml: withLimits('{ max_plans_per_day: 012 }'),
    errors: [
      'config.yaml:11:15 rules[0].limits.max_plans_per_day: 012 has a leading zero, which YAML 1.1 reads as octal (10) and YAML 1.2 as decimal (12): write the number without it, or quote it if it is text',
    ],
  },
  {
    name: 'a rank with a leading zero that is no octal',
    yaml: edit(BASE, WHEN, 'rank: { lte: 09 }'),
    errors: [
      'config.yaml:10:15 rules[0].when.rank.lte: 09 has a leading zero, which YAML 1.1 reads as text and YAML 1.2 as decimal (9): write the number without it, or quote it if it is text',
    ],
  },
  {
    name: 'a threshold with a leading zero in a list',
    yaml: edit(BASE, WHEN, 'pending_sol: { in: [1, 02] }'),
    errors: [
      'config.yaml:10:30 rules[0].when.pending_sol.in[1]: 02 has a leading zero, which YAML 1.1 reads as octal (2) and YAML 1.2 as decimal (2): write the number without it, or quote it if it is text',
    ],
  },
  {
    // `ne` a tier no server writes is always true: the rule acted for the gold wallets it excluded.
    name: 'a tier with a Cyrillic letter',
    yaml: edit(BASE, WHEN, 'tier: { ne: g\u043eld }'),
    errors: [`config.yaml:10:15 rules[0].when.tier.ne: ${TIER}`],
  },
  {
    name: 'a tier with a zero-width space',
    yaml: edit(BASE, WHEN, 'tier: { ne: "gold\u200b" }'),
    errors: [`config.yaml:10:15 rules[0].when.tier.ne: ${TIER}`],
  },
  {
    name: 'a tier padded with a space',
    yaml: edit(BASE, WHEN, 'tier: { in: [platinum, "gold "] }'),
    errors: [`config.yaml:10:30 rules[0].when.tier.in[1]: ${TIER}`],
  },
  {
    // Refused wins (executor/answer.ts): an answer the operator called applied sent the step again.
    name: 'an applied status that is refused by default',
    yaml: withEndpoint('deposit: { applied: [success, Failed] }'),
    errors: [
      'config.yaml:4:35 api.endpoints.deposit.applied[1]: "Failed" is both an applied and a refused status (refused by default): an answer saying it would count as refused and the deposit be sent again; list it in one of the two',
    ],
  },
  {
    name: 'a refused status that is applied by default',
    yaml: withEndpoint('claim: { refused: [failed, OK] }'),
    errors: [
      'config.yaml:4:32 api.endpoints.claim.refused[1]: "ok" is both an applied and a refused status (applied by default): an answer saying it would count as refused and the claim be sent again; list it in one of the two',
    ],
  },
  {
    name: 'a status in both lists given',
    yaml: withEndpoint('mint: { applied: [done], refused: [failed, done] }'),
    errors: [
      'config.yaml:4:23 api.endpoints.mint.applied[0]: "done" is both an applied and a refused status: an answer saying it would count as refused and the mint be sent again; list it in one of the two',
    ],
  },
  {
    // Said before as "looks like a secret, not shown": the key meant was not named.
    name: 'a setting name with a zero-width space in it',
    yaml: edit(BASE, 'max_sol_per_action', 'max_sol_per_action\u200b'),
    errors: [
      'config.yaml:14:1 safety.max_sol_per_action: required: the most SOL one step may move; autoclaim never defaults a money limit',
      `config.yaml:15:3 safety["(a key that looks like a secret, not shown)"]: unknown key: "max_sol_per_action" ${NOT_ASCII}`,
    ],
  },
  {
    name: 'a setting name with a Cyrillic letter in it',
    yaml: withLimits('{ max_s\u043el_per_day: 5 }'),
    errors: [`config.yaml:11:15 rules[0].limits["(a key that looks like a secret, not shown)"]: unknown key: "max_sol_per_day" ${NOT_ASCII}`],
  },
  {
    name: 'a quoted setting name with a padding space',
    yaml: edit(BASE, '  max_sol_per_action: 100', '  max_sol_per_action: 100\n  "paused ": true'),
    errors: [`config.yaml:16:3 safety["(a key that looks like a secret, not shown)"]: unknown key: "paused" ${NOT_ASCII}`],
  },
  {
    name: 'no space after a colon',
    yaml: edit(BASE, CAP, 'max_sol_per_action:100'),
    errors: [
      'config.yaml:14:1 safety: expected a map, got a string (a key with no plain space after its colon: YAML reads `key:100` or a no-break space as text)',
    ],
  },
  {
    name: 'a no-break space after a colon',
    yaml: edit(BASE, CAP, 'max_sol_per_action:\u00a0100'),
    errors: [
      'config.yaml:14:1 safety: expected a map, got a string (a key with no plain space after its colon: YAML reads `key:100` or a no-break space as text)',
    ],
  },
  {
    // The body names no operation and deposit and mint sign the same message: it was a mint.
    name: "a deposit sent to mint's path",
    yaml: withEndpoint('deposit: { path: /actions/mint/ }'),
    errors: [
      'config.yaml:4:16 api.endpoints.deposit.path: deposit and mint are both POST /actions/mint: the request names no operation, so the server would take one for the other; give each its own path',
    ],
  },
];

/** Spellings refused before this review, each at its key. */
const REFUSED: Array<[string, string, string]> = [
  ['hex', edit(BASE, CAP, 'max_sol_per_action: 0x10'), 'safety.max_sol_per_action'],
  ['YAML 1.2 octal', edit(BASE, CAP, 'max_sol_per_action: 0o10'), 'safety.max_sol_per_action'],
  ['YAML 1.1 underscores', edit(BASE, CAP, 'max_sol_per_action: 1_000'), 'safety.max_sol_per_action'],
  ['YAML 1.1 sexagesimal', edit(BASE, CAP, 'max_sol_per_action: 1:30'), 'safety.max_sol_per_action'],
  ['a null', edit(BASE, CAP, 'max_sol_per_action: ~'), 'safety.max_sol_per_action'],
  ['negative zero', edit(BASE, CAP, 'max_sol_per_action: -0.0'), 'safety.max_sol_per_action'],
  ['a plus sign', edit(BASE, CAP, 'max_sol_per_action: +5'), 'safety.max_sol_per_action'],
  ['infinity', edit(BASE, CAP, 'max_sol_per_action: .inf'), 'safety.max_sol_per_action'],
  ['a quoted exponent', edit(BASE, CAP, 'max_sol_per_action: "1e3"'), 'safety.max_sol_per_action'],
  ['a decimal comma', edit(BASE, CAP, 'max_sol_per_action: "1,5"'), 'safety.max_sol_per_action'],
  ['Arabic-Indic digits', edit(BASE, CAP, 'max_sol_per_action: "\u0661\u0660\u0660"'), 'safety.max_sol_per_action'],
  ['full-width digits', edit(BASE, CAP, 'max_sol_per_action: \uff11\uff10\uff10'), 'safety.max_sol_per_action'],
  ['a zero-width space in a number', edit(BASE, CAP, 'max_sol_per_action: 1\u200b00'), 'safety.max_sol_per_action'],
  ['a trailing no-break space', edit(BASE, CAP, 'max_sol_per_action: 100\u00a0'), 'safety.max_sol_per_action'],
  ['a padded quoted amount', edit(BASE, CAP, 'max_sol_per_action: "100 "'), 'safety.max_sol_per_action'],
  ['a lone point', edit(BASE, CAP, 'max_sol_per_action: "."'), 'safety.max_sol_per_action'],
  ['a block scalar', edit(BASE, CAP, 'max_sol_per_action: >\n    100'), 'safety.max_sol_per_action'],
  ['ten decimals', edit(BASE, WHEN, 'pending_sol: { gte: 0.0000000001 }'), 'rules[0].when.pending_sol.gte'],
  ['"50 %"', edit(BASE, '"50%"', '"50 %"'), 'rules[0].do[1].deposit.amount'],
  ['a full-width percent sign', edit(BASE, '"50%"', '"50\uff05"'), 'rules[0].do[1].deposit.amount'],
  ['a percent over 100', edit(BASE, '"50%"', '"100.0001%"'), 'rules[0].do[1].deposit.amount'],
  ['0%', edit(BASE, '"50%"', '"0%"'), 'rules[0].do[1].deposit.amount'],
  ['"ALL"', edit(BASE, '"50%"', 'ALL'), 'rules[0].do[1].deposit.amount'],
  ['a fixed step of 0', edit(BASE, '"50%"', '0'), 'rules[0].do[1].deposit.amount'],
  ['YAML 1.1 "no"', edit(BASE, CAP, `${CAP}\n  paused: no`), 'safety.paused'],
  ['YAML 1.1 "off"', edit(BASE, CAP, `${CAP}\n  paused: off`), 'safety.paused'],
  ['a quoted boolean', edit(BASE, CAP, `${CAP}\n  paused: "false"`), 'safety.paused'],
  ['an empty boolean', edit(BASE, CAP, `${CAP}\n  paused:`), 'safety.paused'],
  ['an empty optional cap', edit(BASE, CAP, `${CAP}\n  max_sol_per_wallet_per_day:`), 'safety.max_sol_per_wallet_per_day'],
  ['an empty rule cap', withLimits('{ max_sol_per_day: ~ }'), 'rules[0].limits.max_sol_per_day'],
  ['a zero rule cap', withLimits('{ max_sol_per_day: 0 }'), 'rules[0].limits.max_sol_per_day'],
  ['zero plans a day', withLimits('{ max_plans_per_day: 0 }'), 'rules[0].limits.max_plans_per_day'],
  ['a misspelt cap', withLimits('{ max_sol_per_dya: 5 }'), 'rules[0].limits.max_sol_per_dya'],
  ['a duration as a number', `${BASE}schedule:\n  jitter: 0\n`, 'schedule.jitter'],
  ['a sexagesimal duration', withLimits('{ cooldown: 1:30 }'), 'rules[0].limits.cooldown'],
  ['a cron as a number', `${BASE}schedule:\n  poll: 5\n`, 'schedule.poll'],
  ['a cron on 30 February', `${BASE}schedule:\n  poll: "0 0 30 2 *"\n`, 'schedule.poll'],
  ['a time zone that does not exist', `${BASE}schedule:\n  timezone: Mars/Olympus\n`, 'schedule.timezone'],
  ['an offset for a time zone', `${BASE}schedule:\n  timezone: "+05:00"\n`, 'schedule.timezone'],
  ['a symbol with a Cyrillic letter', edit(BASE, 'SOL2X', 'S\u041eL2X'), 'rules[0].do[1].deposit.symbol'],
  ['a wallet name with a Cyrillic letter', edit(BASE, 'name: treasury', 'name: tr\u0435asury'), 'wallets[0].name'],
  ['an address with a zero-width space', edit(BASE, 'WnSDf', 'WnSDf\u200b'), 'wallets[0].address'],
  ['an address YAML reads as a number', edit(BASE, 'FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf', '1'.repeat(32)), 'wallets[0].address'],
  ['two rules of one name', BASE.replace('safety:', '  - name: compound\n    when: { rank: { lte: 3 } }\n    do: [claim]\nsafety:'), 'rules[1].name'],
  ['a key given twice, once quoted', `${BASE}"safety": { max_sol_per_action: 1 }\n`, 'safety'],
  ['a step spelt Claim', edit(BASE, '- claim', '- Claim'), 'rules[0].do[0]'],
  ['a step of two kinds', edit(BASE, 'deposit: { symbol: SOL2X, amount: "50%" }', '{ deposit: { symbol: A, amount: 1 }, mint: { symbol: B, amount: 1 } }'), 'rules[0].do[1]'],
];

/** Spellings read as a careful reader of the YAML reads them. */
const READ_AS_WRITTEN: Array<[string, string, (c: NonNullable<ReturnType<TempDir['load']>['config']>) => unknown, unknown]> = [
  ['.5 SOL', edit(BASE, CAP, 'max_sol_per_action: .5'), (c) => c.safety.maxLamportsPerAction, 500_000_000n],
  ['1. SOL', edit(BASE, CAP, 'max_sol_per_action: 1.'), (c) => c.safety.maxLamportsPerAction, 1_000_000_000n],
  ['1e3 SOL', edit(BASE, CAP, 'max_sol_per_action: 1e3'), (c) => c.safety.maxLamportsPerAction, 1_000_000_000_000n],
  ['00.5 SOL (no integer, so no octal)', edit(BASE, CAP, 'max_sol_per_action: 00.5'), (c) => c.safety.maxLamportsPerAction, 500_000_000n],
  ["'100' single-quoted", edit(BASE, CAP, "max_sol_per_action: '100'"), (c) => c.safety.maxLamportsPerAction, 100_000_000_000n],
  ['a lone 0 is no leading zero', edit(BASE, '{ gte: 0.5 }', '{ gte: 0 }'), (c) => c.rules[0]?.when[0]?.value, 0n],
  ['"007" quoted is text', edit(BASE, WHEN, 'tier: { eq: "007" }'), (c) => c.rules[0]?.when[0]?.value, '007'],
  ['False is false', edit(BASE, CAP, `${CAP}\n  paused: False`), (c) => c.safety.paused ?? false, false],
  ['a byte-order mark', `\ufeff${BASE}`, (c) => c.wallets.length, 1],
  ['CRLF line ends', BASE.replace(/\n/g, '\r\n'), (c) => c.safety.maxLamportsPerAction, 100_000_000_000n],
  ['tiers as services write them', edit(BASE, WHEN, 'tier: { in: [Gold, Tier 2, VIP+, gold-plus] }'), (c) => c.rules[0]?.when[0]?.value, ['Gold', 'Tier 2', 'VIP+', 'gold-plus']],
  ['statuses in one list each', withEndpoint('claim: { applied: [done], refused: [failed] }'), (c) => c.api.endpoints.claim.refused, ['failed']],
];

describe('operator input, a hostile review', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(() => dir.remove());

  it.each(HOLES)('hole: $name', ({ yaml, errors }) => {
    dir.write('config.yaml', yaml);
    const result = dir.load('config.yaml');
    expect(formatted(result).errors).toEqual(errors);
    expect(result.config).toBeUndefined();
  });

  it.each(REFUSED)('refused at its key: %s', (_name, yaml, path) => {
    dir.write('config.yaml', yaml);
    const result = dir.load('config.yaml');
    expect(result.config).toBeUndefined();
    const errors = formatted(result).errors;
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatch(/^config\.yaml:[1-9]\d*:[1-9]\d* \S/);
    expect(errors.some((e) => e.split(' ')[1] === `${path}:`)).toBe(true);
  });

  it.each(READ_AS_WRITTEN)('read as written: %s', (_name, yaml, read, expected) => {
    dir.write('config.yaml', yaml);
    const result = dir.load('config.yaml');
    expect(formatted(result).errors).toEqual([]);
    expect(read(result.config!)).toEqual(expected);
  });

  it('a cooldown of 0s is no cooldown: the every-poll warning stays', () => {
    // Before, any cooldown silenced it, 0s included, and the rule fired on every poll unwarned.
    dir.write('config.yaml', withLimits('{ once_per_epoch: false, cooldown: 0s }'));
    expect(formatted(dir.load('config.yaml')).warnings).toContain(
      'config.yaml:11:15 rules[0].limits.once_per_epoch: with once_per_epoch false and no cooldown or max_plans_per_day, the rule fires on every poll while its conditions hold',
    );
  });
});

describe('an API key that no HTTP header can carry', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(() => dir.remove());

  // Before, `check` said valid and every poll of `once` and `run` failed on the header.
  const KEY = 'first-key-0123456789';
  it.each([
    ['two keys on two lines', `${KEY}\nsecond-key-0123456789`],
    ['a NUL', `${KEY}\u0000`.padEnd(24, 'x')],
    ['a carriage return inside', `${KEY}\rX`],
  ])('from the environment: %s', (_name, value) => {
    const { noFile } = apiKeyConfigs(dir);
    const err = thrown(KeyError, () => resolveApiKey(noFile, { AUTOCLAIM_API_KEY: value }));
    expect(err.code).toBe('API_KEY_NOT_ONE_LINE');
    expect(err.message).toContain('$AUTOCLAIM_API_KEY');
    expect(err.message).not.toContain(KEY);
    expect(describeFailure(err).code).toBe(EXIT.CONFIG);
  });

  it('from api.api_key_file, and a key file ending in a line break still loads', () => {
    const { withFile } = apiKeyConfigs(dir);
    dir.write('api_key', `${KEY}\n`);
    expect(resolveApiKey(withFile, {})).toBe(KEY);
    const file = dir.write('api_key', `${KEY}\nold-key-0123456789\n`);
    const err = thrown(KeyError, () => resolveApiKey(withFile, {}));
    expect(err.code).toBe('API_KEY_NOT_ONE_LINE');
    expect(err.message).toContain(`api.api_key_file ${file}`);
  });
});

describe("the signer's policy reads its numbers the same way", () => {
  it('a per-action cap written 010 is refused at its key (YAML 1.1: 8)', () => {
    const setup = signerSetup({ policy: { perAction: '010' } });
    try {
      const r = loadSignerConfig('signer.yaml', { cwd: setup.dir, env: {} });
      expect(r.config).toBeUndefined();
      expect(r.errors.map(formatIssue)).toEqual([
        'signer.yaml:11:7 keys[0].policy.max_sol_per_action: 010 has a leading zero, which YAML 1.1 reads as octal (8) and YAML 1.2 as decimal (10): write the number without it, or quote it if it is text',
      ]);
    } finally {
      setup.cleanup();
    }
  });
});
