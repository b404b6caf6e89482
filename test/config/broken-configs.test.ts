import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BASE, TempDir, edit, formatted } from './helpers.js';


interface Case {
  name: string;
  yaml: string;
  errors: string[];
  warnings?: string[];
}

const API_KEY_HELP =
  'secrets never live in the YAML: remove it (and rotate it if this file was shared), then set $AUTOCLAIM_API_KEY, ' +
  'or name a mode-0600 file with api.api_key_file, or use the systemd credential "api_key"';
const WALLET_KEY_HELP =
  'wallet keys never live in the YAML: remove it (and move the funds if this file was shared), then use ' +
  'key: { file: PATH } (a mode-0600 solana-keygen file), { env: VARIABLE } or { credential: NAME }';

const CASES: Case[] = [
  {
    name: 'wrong type for a condition',
    yaml: edit(BASE, '{ gte: 0.5 }', 'lots'),
    errors: ['config.yaml:10:7 rules[0].when.pending_sol: expected operators and values, e.g. { gte: 0.5 }'],
  },
  {
    name: 'wrong type for an amount',
    yaml: edit(BASE, '{ gte: 0.5 }', '{ gte: true }'),
    errors: [
      'config.yaml:10:22 rules[0].when.pending_sol.gte: expected a SOL amount: a number like 0.5 or a decimal string like "0.5"',
    ],
  },
  {
    name: 'a typo in a key',
    yaml: edit(BASE, 'pending_sol:', 'pending_sool:'),
    errors: ['config.yaml:10:7 rules[0].when.pending_sool: unknown key "pending_sool" (did you mean "pending_sol"?)'],
  },
  {
    name: 'an unknown key without a near match lists the keys',
    yaml: edit(BASE, 'amount: "50%" }', 'amount: "50%", vault: x }'),
    errors: ['config.yaml:13:50 rules[0].do[1].deposit.vault: unknown key "vault"; expected one of symbol, amount'],
  },
  {
    name: 'tab indentation',
    yaml: edit(BASE, '  base_url', '\tbase_url'),
    errors: ['config.yaml:2:1: a tab is used for indentation; YAML indents with spaces'],
  },
  {
    name: 'a duplicate key',
    yaml: `${BASE}safety:\n  max_sol_per_action: 5\n`,
    errors: ['config.yaml:16:1 safety: duplicate key "safety" (first at line 14)'],
  },
  {
    name: 'no safety section',
    yaml: edit(BASE, 'safety:\n  max_sol_per_action: 100\n', ''),
    errors: [
      'config.yaml:1:1 safety: required: autoclaim moves money and never guesses a limit; add safety: { max_sol_per_action: <SOL> }',
    ],
  },
  {
    name: 'safety without max_sol_per_action',
    yaml: edit(BASE, 'safety:\n  max_sol_per_action: 100\n', 'safety: {}\n'),
    errors: [
      'config.yaml:14:1 safety.max_sol_per_action: required: the most SOL one step may move; autoclaim never defaults a money limit',
    ],
  },
  {
    name: 'a zero safety cap',
    yaml: edit(BASE, 'max_sol_per_action: 100', 'max_sol_per_action: 0'),
    errors: ['config.yaml:15:3 safety.max_sol_per_action: must be more than 0'],
  },
  {
    name: 'a YAML 1.1 boolean',
    yaml: edit(BASE, '    do:', '    limits: { once_per_epoch: yes }\n    do:'),
    errors: ['config.yaml:11:15 rules[0].limits.once_per_epoch: expected true or false, got a string (write true or false)'],
  },
  {
    name: 'a bad duration',
    yaml: `${BASE}schedule:\n  jitter: 10 minutes\n`,
    errors: ['config.yaml:17:3 schedule.jitter: expected a duration like 30s, 10m, 6h, 1d or 500ms'],
  },
  {
    name: 'a bad cron field',
    yaml: `${BASE}schedule:\n  poll: "61 * * * *"\n`,
    errors: ['config.yaml:17:3 schedule.poll: not a node-cron expression: "61" is not a valid minute'],
  },
  {
    name: 'a cron with the wrong number of fields',
    yaml: `${BASE}schedule:\n  poll: "* * * *"\n`,
    errors: ['config.yaml:17:3 schedule.poll: not a node-cron expression: expected 5 or 6 fields but got 4'],
  },
  {
    name: 'a cron day that never occurs',
    yaml: `${BASE}schedule:\n  poll: "0 0 30 2 *"\n`,
    errors: ['config.yaml:17:3 schedule.poll: not a node-cron expression: that day never occurs in those months'],
  },
  {
    name: 'an address that is not 32 bytes',
    yaml: edit(BASE, 'FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf', 'z'.repeat(44)),
    errors: ['config.yaml:5:5 wallets[0].address: not a public key: base58 that decodes to 32 bytes (this is 33)'],
  },
  {
    name: 'an address that is not base58',
    yaml: edit(BASE, 'FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf', 'FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZ0WnSDf'),
    errors: ['config.yaml:5:5 wallets[0].address: expected a base58 public key'],
  },
  {
    name: 'a wallet naming an unknown rule',
    yaml: edit(BASE, '{ file: ./keys/treasury.json }', '{ file: ./keys/treasury.json }\n    rules: [compund]'),
    errors: ['config.yaml:7:13 wallets[0].rules[0]: no rule named "compund"; rules are: compound'],
    warnings: ['config.yaml:9:5 rules[0].name: rule "compound" is used by no wallet'],
  },
  {
    name: 'a percent with no claim before it',
    yaml: edit(BASE, '      - claim\n', ''),
    errors: [
      'config.yaml:12:35 rules[0].do[0].deposit.amount: 50% is a share of what this plan claimed, but no claim comes before this step',
    ],
  },
  {
    name: '"all" with no claim before it',
    yaml: edit(edit(BASE, '      - claim\n', ''), '"50%"', 'all'),
    errors: [
      'config.yaml:12:35 rules[0].do[0].deposit.amount: "all" is a share of what this plan claimed, but no claim comes before this step',
    ],
  },
  {
    // A claim receives SOL; a withdraw takes vault shares and a burn the token's units: a share of
    // the claim would sign a count of lamports as a count of shares (helper 34).
    name: 'a withdraw sized as a percent of the claim',
    yaml: edit(BASE, 'deposit: { symbol: SOL2X, amount: "50%" }', 'withdraw: { symbol: SOL2X, amount: "50%" }'),
    errors: [
      'config.yaml:13:36 rules[0].do[1].withdraw.amount: a withdraw takes SOL2X vault shares, not SOL: 50% of the SOL claimed is no amount of shares; write the number of shares, e.g. amount: 1.5',
    ],
  },
  {
    name: 'a burn sized as "all" of the claim',
    yaml: edit(BASE, 'deposit: { symbol: SOL2X, amount: "50%" }', 'burn: { symbol: SOL5X, amount: all }'),
    errors: [
      'config.yaml:13:32 rules[0].do[1].burn.amount: a burn takes SOL5X tokens, not SOL: "all" of the SOL claimed is no amount of tokens; write the number of tokens, e.g. amount: 1.5',
    ],
  },
  {
    // The per-action cap bounds a withdraw's shares as a number; the message names the unit.
    name: 'a withdraw above the safety cap',
    yaml: edit(BASE, 'deposit: { symbol: SOL2X, amount: "50%" }', 'withdraw: { symbol: SOL2X, amount: 150 }'),
    errors: [
      'config.yaml:13:36 rules[0].do[1].withdraw.amount: 150 SOL2X vault shares is above safety.max_sol_per_action (100 SOL); this step would always be refused',
    ],
  },
  {
    name: 'an amount finer than a lamport',
    yaml: edit(BASE, '{ gte: 0.5 }', '{ gte: 0.1234567891 }'),
    errors: ['config.yaml:10:22 rules[0].when.pending_sol.gte: 0.1234567891 is finer than one lamport (SOL has at most 9 decimals)'],
  },
  {
    name: 'a quoted amount finer than a lamport',
    yaml: edit(BASE, 'max_sol_per_action: 100', 'max_sol_per_action: "0.0000000001"'),
    errors: ['config.yaml:15:3 safety.max_sol_per_action: 0.0000000001 is finer than one lamport (SOL has at most 9 decimals)'],
  },
  {
    name: 'a fixed amount above the safety cap',
    yaml: edit(BASE, 'amount: "50%"', 'amount: 150'),
    errors: [
      'config.yaml:13:35 rules[0].do[1].deposit.amount: 150 SOL is above safety.max_sol_per_action (100 SOL); this step would always be refused',
    ],
  },
  {
    name: 'a percent out of range',
    yaml: edit(BASE, '"50%"', '"0%"'),
    errors: [
      'config.yaml:13:35 rules[0].do[1].deposit.amount: 0% is out of range: a percent of the claim is more than 0% and at most 100%',
    ],
  },
  {
    name: 'a percent with too many decimals',
    yaml: edit(BASE, '"50%"', '"12.34567%"'),
    errors: [
      'config.yaml:13:35 rules[0].do[1].deposit.amount: expected a SOL amount (0.5), a percent of what the claim received ("50%", at most 4 decimals) or "all"',
    ],
  },
  {
    name: 'steps that share out more than the claim',
    yaml: edit(BASE, '"50%" }', '"50%" }\n      - mint: { symbol: JLP, amount: "60%" }'),
    errors: ['config.yaml:14:30 rules[0].do[2].mint.amount: the steps after the claim add up to 110% of it, more than it received'],
  },
  {
    name: 'a misspelt step',
    yaml: edit(BASE, '- claim', '- clam'),
    errors: ['config.yaml:12:9 rules[0].do[0]: expected claim, or one of { deposit | mint | withdraw | burn: { symbol, amount } }'],
  },
  {
    name: 'a literal API key',
    yaml: edit(BASE, 'base_url: http://127.0.0.1:8787/v1', 'base_url: http://127.0.0.1:8787/v1\n  api_key: sk_live_CANARY123'),
    errors: [`config.yaml:3:3 api.api_key: ${API_KEY_HELP}`],
  },
  {
    name: 'a literal wallet secret',
    yaml: edit(BASE, '    key: {', '    secret_key: CANARY0000\n    key: {'),
    errors: [`config.yaml:6:5 wallets[0].secret_key: ${WALLET_KEY_HELP}`],
  },
  {
    name: 'key material where the key source goes',
    yaml: edit(BASE, '{ file: ./keys/treasury.json }', `CANARY${'4Ns'.repeat(20)}`),
    errors: [`config.yaml:6:5 wallets[0].key: looks like key material; ${WALLET_KEY_HELP}`],
  },
  {
    name: 'a key source that is none of the known shapes',
    yaml: edit(BASE, '{ file: ./keys/treasury.json }', '{ path: ./keys/treasury.json }'),
    errors: [
      'config.yaml:6:5 wallets[0].key: expected exactly one of { file: PATH }, { env: VARIABLE }, { credential: NAME }, { pkcs11: {...} }, { vault: {...} }, { aws_kms: {...} } or { signer: { socket, key } }',
    ],
  },
  {
    name: 'a key source with a wrong value type',
    yaml: edit(BASE, '{ file: ./keys/treasury.json }', '{ env: 12 }'),
    errors: ['config.yaml:6:12 wallets[0].key.env: expected a string, got a whole number'],
  },
  {
    name: 'an endpoint path and method that cannot be used',
    yaml: edit(BASE, 'v1\n', 'v1\n  endpoints: { claim: { method: GET, path: rewards/claim } }\n'),
    errors: [
      'config.yaml:3:25 api.endpoints.claim.method: expected one of POST, PUT',
      'config.yaml:3:38 api.endpoints.claim.path: expected a path starting with "/", without placeholders, query or fragment',
    ],
  },
  {
    name: 'a base URL that is not http(s)',
    yaml: edit(BASE, 'http://127.0.0.1:8787/v1', 'ftp://127.0.0.1/v1'),
    errors: [
      'config.yaml:2:3 api.base_url: expected an http(s) URL ending in the version prefix (e.g. https://host/v1), or "sandbox"',
    ],
  },
  {
    name: 'credentials in the base URL',
    yaml: edit(BASE, 'http://127.0.0.1:8787/v1', 'https://user:CANARY@rewards.example.com/v1'),
    errors: [
      'config.yaml:2:3 api.base_url: credentials in the URL are a secret in the YAML; use $AUTOCLAIM_API_KEY or api.api_key_file',
    ],
  },
  {
    name: 'no wallets',
    yaml: edit(BASE, 'wallets:\n  - name: treasury\n    address: FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf\n    key: { file: ./keys/treasury.json }\n', 'wallets: []\n'),
    errors: ['config.yaml:3:1 wallets: at least one wallet is needed'],
  },
  {
    name: 'the empty file',
    yaml: '',
    errors: ['config.yaml: the config file is empty'],
  },
  {
    name: 'a file of comments',
    yaml: '# nothing yet\n',
    errors: ['config.yaml: the config file is empty (only comments)'],
  },
  {
    name: 'a list at the top level',
    yaml: '- api\n- wallets\n',
    errors: ['config.yaml:1:1: expected a map of settings (api, wallets, rules, safety, ...)'],
  },
  {
    name: 'an anchor and its alias',
    yaml: `a: &a 1\nb: *a\n${BASE}`,
    errors: [
      'config.yaml:1:4 a: anchor &a: anchors and aliases are not supported in a config; write the values out',
      'config.yaml:2:4 b: alias *a: anchors and aliases are not supported in a config; write the values out',
    ],
  },
  {
    name: 'an alias without an anchor',
    yaml: edit(BASE, 'max_sol_per_action: 100', 'max_sol_per_action: *cap'),
    errors: ['config.yaml:15:23 safety.max_sol_per_action: alias *cap: anchors and aliases are not supported in a config; write the values out'],
  },
  {
    name: 'nesting deep enough to exhaust the parser',
    yaml: `${BASE}extra: ${'['.repeat(5000)}${']'.repeat(5000)}\n`,
    errors: ['config.yaml:16:1: nested too deeply for a config file; refused'],
  },
  {
    name: 'more than one document',
    yaml: `${BASE}---\napi: {}\n`,
    errors: ['config.yaml:16:1: the file holds more than one YAML document (---); a config is one document'],
  },
];

describe('broken configs: every problem named by file:line:col path', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(() => dir.remove());

  it.each(CASES)('$name', ({ yaml, errors, warnings }) => {
    dir.write('config.yaml', yaml);
    const result = dir.load('config.yaml');
    expect(formatted(result).errors).toEqual(errors);
    if (warnings) expect(formatted(result).warnings).toEqual(warnings);
    expect(result.config).toBeUndefined();
    // A secret pasted into the YAML is named by its place, never repeated.
    expect(JSON.stringify(result)).not.toContain('CANARY');
  });

  it('collects every error in one pass, in file order', () => {
    let yaml = edit(BASE, 'pending_sol:', 'pending_sool:');
    yaml = edit(yaml, 'base_url: http://127.0.0.1:8787/v1', 'base_url: http://127.0.0.1:8787/v1\n  timeout_ms: soon');
    yaml = edit(yaml, 'max_sol_per_action: 100', 'max_sol_per_action: -1');
    dir.write('config.yaml', yaml);
    expect(formatted(dir.load('config.yaml')).errors).toEqual([
      'config.yaml:3:3 api.timeout_ms: expected a number, got a string',
      'config.yaml:11:7 rules[0].when.pending_sool: unknown key "pending_sool" (did you mean "pending_sol"?)',
      'config.yaml:16:3 safety.max_sol_per_action: a SOL amount cannot be negative',
    ]);
  });

  it('collects every cross-field error in one pass', () => {
    const yaml = `api:
  base_url: sandbox
  endpoints:
    claim: { message: "{wallet}|{amount}" }
    deposit: { message: "{wallet}|{symbol}|{amount}|{ts}|{nonce}" }
wallets:
  - name: a
    address: FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf
    key: { env: A_SECRET }
  - name: a
    address: FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf
    key: { credential: b }
rules:
  - name: r1
    when: { pending_sol: { gte: 1 } }
    do: [claim, claim, { deposit: { symbol: X, amount: all } }, { mint: { symbol: Y, amount: "1%" } }]
  - name: r1
    when: { rank: {} }
    do: [claim]
safety:
  max_sol_per_action: 10
metrics:
  listen: 127.0.0.1:99999
`;
    dir.write('config.yaml', yaml);
    expect(formatted(dir.load('config.yaml')).errors).toEqual([
      'config.yaml:4:14 api.endpoints.claim.message: a claim has no {amount} to sign',
      'config.yaml:4:14 api.endpoints.claim.message: the claim message must include {ts}',
      'config.yaml:5:16 api.endpoints.deposit.message: unknown placeholder {nonce}; placeholders are {wallet} {ts} {epoch} {symbol} {amount} {op}',
      'config.yaml:10:5 wallets[1].name: duplicate wallet name "a" (also wallets[0], line 7)',
      'config.yaml:11:5 wallets[1].address: duplicate wallet address "FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf" (also wallets[0], line 8)',
      'config.yaml:16:17 rules[0].do[1]: a plan claims once; step 1 already claims',
      'config.yaml:16:86 rules[0].do[3].mint.amount: an earlier step already moves "all" of the claim; nothing is left for this one',
      'config.yaml:17:5 rules[1].name: duplicate rule name "r1" (also rules[0], line 14)',
      'config.yaml:18:13 rules[1].when.rank: no operator: write e.g. { lte: 10 }',
      'config.yaml:23:3 metrics.listen: the port must be between 1 and 65535',
    ]);
  });

  it('reports a missing file without a position', () => {
    expect(formatted(dir.load('nope.yaml')).errors).toEqual([
      'nope.yaml: config file not found (give one with --config or $AUTOCLAIM_CONFIG)',
    ]);
  });

  it('refuses a file above 1 MiB before parsing it', () => {
    dir.write('config.yaml', `${BASE}# ${'x'.repeat(2 * 1024 * 1024)}\n`);
    expect(formatted(dir.load('config.yaml')).errors).toEqual([
      'config.yaml: the file is 2.0 MiB; a config file above 1.0 MiB is refused before it is read',
    ]);
  });

  it('refuses a directory and a file that is not UTF-8', () => {
    mkdirSync(join(dir.path, 'conf.d'));
    expect(formatted(dir.load('conf.d')).errors).toEqual(['conf.d: this is a directory, not a config file']);
    dir.write('config.yaml', Buffer.from([0x61, 0x3a, 0x20, 0xff, 0xfe, 0x0a]));
    expect(formatted(dir.load('config.yaml')).errors).toEqual(['config.yaml: the config file is not UTF-8 text']);
  });
});
