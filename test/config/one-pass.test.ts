// Config feedback in one pass (issue 13): schema, cross-field and key problems come in one list,
// each with file:line:col; key problems point at the wallet's `key:`. What the schema refused is
// set aside, and nothing set aside causes a message of its own.
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/keys/signer.js';
import { writeKeyFile } from '../../src/keys/keys.js';
import { loadConfig, type LoadResult } from '../../src/config/index.js';
import { formatIssue } from '../../src/errors.js';
import { Redactor } from '../../src/log/redact.js';
import { TempDir } from './helpers.js';

const API_KEY = 'one-pass-api-key-0123456789';

interface Wallet {
  name: string;
  address: string;
}

function wallets(dir: TempDir, names: string[]): Wallet[] {
  mkdirSync(join(dir.path, 'keys'), { recursive: true, mode: 0o700 });
  return names.map((name) => {
    const { secretKey64, address } = generateKeypair();
    writeKeyFile(join(dir.path, 'keys', `${name}.json`), secretKey64);
    return { name, address };
  });
}

function load(dir: TempDir, env: NodeJS.ProcessEnv = { AUTOCLAIM_API_KEY: API_KEY }, redactor = new Redactor()): LoadResult {
  return loadConfig('config.yaml', { env, cwd: dir.path, keys: { redactor } });
}

const errors = (r: LoadResult) => r.errors.map(formatIssue);

describe('one pass: schema, cross-field and key problems together', () => {
  let dir: TempDir;
  let w: Wallet[];
  beforeEach(() => {
    dir = new TempDir();
    w = wallets(dir, ['alpha', 'beta', 'gamma']);
  });
  afterEach(() => dir.remove());

  const yaml = (over: { alphaKey?: string; betaRules?: string; gte?: string; poll?: string; gammaAddress?: string } = {}) => `api:
  base_url: https://rewards.example.com/v1
schedule:
  poll: "${over.poll ?? '*/1 * * * *'}"
wallets:
  - name: alpha
    address: ${w[0]?.address}
    key: { file: ${over.alphaKey ?? './keys/alpha.json'} }
  - name: beta
    address: ${w[1]?.address}
    key: { file: ./keys/beta.json }
    rules: ${over.betaRules ?? '[compound]'}
  - name: gamma
    address: ${over.gammaAddress ?? w[2]?.address}
    key: { file: ./keys/gamma.json }
rules:
  - name: compound
    when:
      pending_sol: { gte: ${over.gte ?? '0.5'} }
    do:
      - claim
  - name: sweep
    do: [claim]
safety:
  max_sol_per_action: 100
`;

  it('a valid config loads with its keys, and the secrets are registered with the redactor', () => {
    dir.write('config.yaml', yaml());
    const redactor = new Redactor();
    const r = load(dir, undefined, redactor);
    expect(errors(r)).toEqual([]);
    expect([...(r.secrets?.signers.keys() ?? [])].sort()).toEqual(w.map((x) => x.address).sort());
    expect(r.secrets?.apiKey).toBe(API_KEY);
    expect(redactor.redact(`key ${API_KEY}`)).not.toContain(API_KEY);
  });

  it('lists a schema problem, a cross-field problem, a cron step and a key problem in one run, in file order', () => {
    dir.write('config.yaml', yaml({ alphaKey: './keys/alpha-typo.json', betaRules: '[compund]', gte: 'lots', poll: '*/70 * * * *' }));
    const r = load(dir);
    expect(r.config).toBeUndefined();
    expect(errors(r)).toEqual([
      'config.yaml:4:3 schedule.poll: "*/70" in the minute field: only 0 matches, so it fires once an hour, not every 70; use a step that divides 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)',
      `config.yaml:8:5 wallets[0].key: wallet alpha: key file ${join(dir.path, 'keys', 'alpha-typo.json')} does not exist`,
      'config.yaml:12:13 wallets[1].rules[0]: no rule named "compund"; rules are: compound, sweep',
      'config.yaml:19:22 rules[0].when.pending_sol.gte: expected a SOL amount: a number like 0.5 or a decimal string like "0.5"',
    ]);
  });

  it('places a key readable by others at the wallet’s key:, with the fix', () => {
    dir.write('config.yaml', yaml());
    chmodSync(join(dir.path, 'keys', 'beta.json'), 0o644);
    expect(errors(load(dir))).toEqual([
      `config.yaml:11:5 wallets[1].key: wallet beta: key file ${join(dir.path, 'keys', 'beta.json')} is readable by group or others (mode 0644); restrict it with: chmod 600 ${join(dir.path, 'keys', 'beta.json')}`,
    ]);
  });

  it('places a key of another address at the wallet’s key:', () => {
    dir.write('config.yaml', yaml({ alphaKey: './keys/gamma.json' }));
    expect(errors(load(dir))).toEqual([
      `config.yaml:8:5 wallets[0].key: wallet alpha: key file ${join(dir.path, 'keys', 'gamma.json')} is the key of address ${w[2]?.address}, but wallet alpha is configured with address ${w[0]?.address}`,
    ]);
  });

  it('a missing API key is reported with the rest, at api', () => {
    dir.write('config.yaml', yaml({ betaRules: '[compund]' }));
    expect(errors(load(dir, {}))).toEqual([
      'config.yaml:1:1 api: no API key: set $AUTOCLAIM_API_KEY, api.api_key_file, or the systemd credential api_key (signed requests need it)',
      'config.yaml:12:13 wallets[1].rules[0]: no rule named "compund"; rules are: compound, sweep',
    ]);
  });

  it('a short webhook secret is refused like a short API key, without its value', () => {
    dir.write('config.yaml', yaml());
    const list = errors(load(dir, { AUTOCLAIM_API_KEY: API_KEY, AUTOCLAIM_WEBHOOK_SECRET: 'short-secret' }));
    expect(list).toEqual([
      'config.yaml: the webhook secret from $AUTOCLAIM_WEBHOOK_SECRET is shorter than 16 characters; a secret that short cannot be kept out of logs reliably (and is guessable): use a long random one, e.g. openssl rand -hex 32',
    ]);
    expect(list.join('\n')).not.toContain('short-secret');
    const redactor = new Redactor();
    const ok = load(dir, { AUTOCLAIM_API_KEY: API_KEY, AUTOCLAIM_WEBHOOK_SECRET: 'a-long-webhook-secret-0123' }, redactor);
    expect(ok.secrets?.webhookSecret).toBe('a-long-webhook-secret-0123');
    expect(redactor.redact('x a-long-webhook-secret-0123 y')).toBe('x [REDACTED] y');
  });

  it('sets aside what the schema refused: no message about a stand-in, none about what depends on it', () => {
    // The rule the wallet names is refused by the schema: the wallet's reference is not judged, and
    // the refused wallet's key is not loaded (its key file does not even exist).
    dir.write(
      'config.yaml',
      `api:
  base_url: https://rewards.example.com/v1
  timeout_ms: soon
wallets:
  - name: alpha
    address: ${w[0]?.address}
    key: { file: ./keys/alpha.json }
    rules: [broken]
  - name: nokey
    adress: ${w[1]?.address}
    key: { file: ./keys/none.json }
rules:
  - name: broken
    do: [clam]
safety:
  max_sol_per_actoin: 1
`,
    );
    expect(errors(load(dir))).toEqual([
      'config.yaml:3:3 api.timeout_ms: expected a number, got a string',
      'config.yaml:9:5 wallets[1].address: required',
      'config.yaml:10:5 wallets[1].adress: unknown key "adress" (did you mean "address"?)',
      'config.yaml:14:10 rules[0].do[0]: expected claim, or one of { deposit | mint | withdraw | burn: { symbol, amount } }',
      'config.yaml:15:1 safety.max_sol_per_action: required: the most SOL one step may move; autoclaim never defaults a money limit',
      'config.yaml:16:3 safety.max_sol_per_actoin: unknown key "max_sol_per_actoin" (did you mean "max_sol_per_action"?)',
    ]);
  });

  it('a tag (!!binary) is refused at its place, and the rest is still checked', () => {
    // Found by config-fuzz: a Uint8Array once passed for a map, and setting its bytes aside threw.
    dir.write('config.yaml', yaml().replace('  base_url: https://rewards.example.com/v1\n', '  base_url: https://rewards.example.com/v1\n  rate_limit: !!binary aGVsbG8=\n'));
    const r = load(dir);
    expect(r.errors.map((e) => `${e.line}:${e.col} ${e.path} ${e.message}`)).toEqual(['3:15 api.rate_limit a tag (!…) is not supported in a config; write the value plainly']);
    expect(errors(r).join('\n')).not.toContain('could not be checked');
  });

  it('an address that is not a public key is reported once: its key still loads, with no mismatch message', () => {
    dir.write('config.yaml', yaml({ gammaAddress: 'FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZ0WnSDf' }));
    expect(errors(load(dir))).toEqual(['config.yaml:14:5 wallets[2].address: expected a base58 public key']);
  });

  it('without the key step (status, actions, doctor), keys are not read', () => {
    dir.write('config.yaml', yaml({ alphaKey: './keys/missing.json' }));
    const r = loadConfig('config.yaml', { env: {}, cwd: dir.path });
    expect(errors(r)).toEqual([]);
    expect(r.secrets).toBeUndefined();
  });
});
