// Config fuzz (issue 4): hand-written broken YAML and fast-check mutations of the shipped demo
// config and of a real sandbox config. The properties: loadConfig never throws (nor swallows an
// internal failure), every error names a place inside the file as `file:line:col path: message`
// on one line, and the CLI refuses a broken file with exit 78 — `check` without a stack trace,
// `once` before it creates any state or sends any request.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type LoadResult } from '../../src/config/index.js';
import { loadConfigText } from '../../src/config/load.js';
import { formatIssue, type ConfigIssue } from '../../src/errors.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, configYaml, makeWallets, REPO, runCli, tempDir, type TestWallet } from '../e2e/helpers.js';
import { mutatedArb } from '../support/yaml-mutations.js';

const FILE = 'autoclaim.yaml';
/** AUTOCLAIM_FUZZ_SCALE=10 runs ten times the cases (a soak); the suite's default is 1. */
const SCALE = Math.max(1, Number(process.env.AUTOCLAIM_FUZZ_SCALE ?? 1) || 1);
const DEMO = readFileSync(join(REPO, 'config/autoclaim.yaml'), 'utf8');

/** Problems of the whole file, which have no line to point at. */
const WHOLE_FILE = /^(the config file is empty|the file is [\d.]+ MiB|the config file is not UTF-8|config file not found)/;

/** Every issue is placed inside the text and formats as one `file:line:col path: message` line. */
function placementProblems(text: string, issues: readonly ConfigIssue[]): string[] {
  const lines = text.split('\n');
  const problems: string[] = [];
  for (const i of issues) {
    const f = formatIssue(i);
    if (f.includes('\n')) problems.push(`not one line: ${JSON.stringify(f)}`);
    if (i.file !== FILE) problems.push(`names ${i.file}: ${f}`);
    if (i.message.trim() === '') problems.push(`no message: ${f}`);
    if (/could not be checked/.test(i.message)) problems.push(`internal failure swallowed: ${f}`);
    if (i.line === 0) {
      if (!WHOLE_FILE.test(i.message)) problems.push(`no position: ${f}`);
      continue;
    }
    const line = lines[i.line - 1];
    if (line === undefined) problems.push(`line ${i.line} beyond the ${lines.length} lines: ${f}`);
    else if (i.col < 1 || i.col > line.length + 1) problems.push(`column ${i.col} outside line ${i.line} (${line.length} chars): ${f}`);
    const prefix = `${FILE}:${i.line}:${i.col}${i.path === '' ? '' : ` ${i.path}`}: `;
    if (!f.startsWith(prefix)) problems.push(`not file:line:col path: message: ${f}`);
  }
  return problems;
}

function load(text: string): LoadResult {
  return loadConfigText(text, { file: FILE, absFile: join('/nonexistent-autoclaim-fuzz', FILE), env: {}, cwd: '/nonexistent-autoclaim-fuzz' });
}


// ----------------------------------------------------------------------------------------------

describe('config fuzz', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];
  let sandboxYaml: string;
  const tally = { generated: 0, broken: 0, stillValid: 0, viaCli: 0 };

  beforeAll(async () => {
    sandbox = await startSandbox({ apiKey: CANARY_API_KEY, defaultAccrualLamportsPerSec: 0n });
    ({ dir, cleanup } = tempDir('autoclaim-cfgfuzz-'));
    wallets = makeWallets(dir, ['alpha', 'beta']);
    for (const w of wallets) sandbox.world.setWallet(w.address, { pendingLamports: 1_000_000_000n });
    sandboxYaml = configYaml({ baseUrl: sandbox.url, wallets });
  });
  afterAll(async () => {
    await sandbox.close();
    cleanup();
    // The measured figures for docs/reliability.md.
    console.info(`config fuzz: ${JSON.stringify(tally)}`);
  });

  /** Refused by check (78, no stack) and by once (78, nothing created, nothing sent). */
  async function expectRefusedByCli(text: string | Buffer): Promise<void> {
    const config = join(dir, FILE);
    writeFileSync(config, text);
    const before = sandbox.stats().total;
    const check = await runCli(['check', '--config', config], { cwd: dir });
    expect(check.code, check.stderr).toBe(78);
    expect(check.stdout).toBe('');
    const lines = check.stderr.trimEnd().split('\n');
    for (const l of lines) {
      expect(l).toMatch(new RegExp(`^(warning: )?(${config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|${FILE})(:\\d+:\\d+)?[ :]`));
      expect(l).not.toMatch(/^\s+at |unexpected error|Error:/);
    }
    const once = await runCli(['once', '--config', config], { cwd: dir });
    expect(once.code, once.stderr).toBe(78);
    expect(once.stderr).not.toMatch(/^\s+at |unexpected error/m);
    expect(once.events.filter((e) => e.event !== 'config.warning')).toEqual([]);
    expect(existsSync(join(dir, 'state'))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual([FILE, 'keys']);
    expect(sandbox.stats().total).toBe(before);
    tally.viaCli++;
  }

  const HAND_WRITTEN: Array<[string, () => string, RegExp]> = [
    ['a tab indenting a key', () => sandboxYaml.replace('  base_url', '\tbase_url'), /a tab is used for indentation/],
    ['a tab inside a list item', () => sandboxYaml.replace('  - name: alpha', '\t- name: alpha'), /tab/],
    ['a duplicate top-level key', () => `${sandboxYaml}schedule:\n  poll: "* * * * *"\n`, /duplicate key "schedule"/],
    ['a duplicate nested key', () => sandboxYaml.replace('pending_sol: { gte: 0.5 }', 'pending_sol: { gte: 0.5, gte: 0.6 }'), /duplicate key "gte"/],
    ['an alias', () => sandboxYaml.replace('max_sol_per_action: 100', 'max_sol_per_action: *cap'), /alias \*cap: anchors and aliases are not supported/],
    ['an anchor', () => sandboxYaml.replace('max_sol_per_action: 100', 'max_sol_per_action: &cap 100'), /anchor &cap: anchors and aliases are not supported/],
    [
      'an alias bomb (billion laughs)',
      () => `${sandboxYaml}a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n`,
      /anchors and aliases are not supported/,
    ],
    ['a self-referencing anchor (a loop)', () => `${sandboxYaml}loop: &l [ *l ]\n`, /anchors and aliases are not supported/],
    ['a rule that merges itself (a rule loop)', () => sandboxYaml.replace('  - name: compound', '  - &r\n    <<: *r\n    name: compound'), /merge keys \(<<\) are not supported/],
    ['safety that contains itself', () => sandboxYaml.replace('safety:\n  max_sol_per_action: 100', 'safety: &s\n  max_sol_per_action: 100\n  again: *s'), /anchors and aliases are not supported/],
    ['two anchors merging each other', () => `${sandboxYaml}x: &a { <<: *b }\ny: &b { <<: *a }\n`, /merge keys \(<<\) are not supported/],
    ['a wallet naming a rule that does not exist', () => sandboxYaml.replace('key: { file: ./keys/alpha.json }', 'key: { file: ./keys/alpha.json }\n    rules: [compound, nope]'), /no rule named "nope"/],
    ['wrong type: wallets is a string', () => sandboxYaml.replace(/wallets:\n[\s\S]*?rules:/, 'wallets: everyone\nrules:'), /wallets/],
    ['wrong type: an amount is a list', () => sandboxYaml.replace('max_sol_per_action: 100', 'max_sol_per_action: [100]'), /expected a SOL amount/],
    ['wrong type: jitter is a boolean', () => sandboxYaml.replace('jitter: 0s', 'jitter: true'), /schedule\.jitter/],
    ['wrong type: poll is a number', () => sandboxYaml.replace('poll: "*/1 * * * * *"', 'poll: 5'), /schedule\.poll/],
    ['wrong type: 1e400 as an amount', () => sandboxYaml.replace('max_sol_per_action: 100', 'max_sol_per_action: 1e400'), /expected a SOL amount/],
    ['wrong type: .nan as a threshold', () => sandboxYaml.replace('{ gte: 0.5 }', '{ gte: .nan }'), /pending_sol\.gte/],
    ['an unknown top-level key', () => `${sandboxYaml}polling: fast\n`, /unknown key "polling"/],
    ['a misspelt nested key', () => sandboxYaml.replace('base_url:', 'bsae_url:'), /unknown key "bsae_url"|base_url/],
    ['__proto__ as a key', () => `${sandboxYaml}__proto__: { polluted: true }\n`, /unknown key "__proto__"/],
    ['a list as a key', () => `${sandboxYaml}? [a, b]\n: c\n`, /a key must be a plain name/],
    ['a tag', () => sandboxYaml.replace('max_sol_per_action: 100', 'max_sol_per_action: !!str 100'), /a tag \(!…\) is not supported/],
    ['a %YAML directive', () => `%YAML 1.2\n---\n${sandboxYaml}`, /a %YAML directive is not supported/],
    ['a second document', () => `${sandboxYaml}---\napi: {}\n`, /more than one YAML document/],
    ['nesting 5,000 deep', () => `${sandboxYaml}deep: ${'['.repeat(5000)}${']'.repeat(5000)}\n`, /nested too deeply/],
    ['an unterminated quote', () => sandboxYaml.replace('"50%"', '"50%'), /./],
    ['an unterminated flow map', () => sandboxYaml.replace('{ gte: 0.5 }', '{ gte: 0.5'), /./],
    ['only comments', () => '# nothing here\n# at all\n', /empty/],
    ['a literal API key in the file', () => sandboxYaml.replace('timeout_ms: 2000', 'timeout_ms: 2000\n  api_key: sk_live_CANARY_never_here'), /secrets never live in the YAML/],
  ];

  it.each(HAND_WRITTEN)('hand-written: %s', async (_name, make, says) => {
    const text = make();
    const r = load(text);
    expect(r.config).toBeUndefined();
    expect(r.errors.length).toBeGreaterThan(0);
    expect(placementProblems(text, [...r.errors, ...r.warnings])).toEqual([]);
    expect(r.errors.map(formatIssue).join('\n')).toMatch(says);
    await expectRefusedByCli(text);
  });

  it('hand-written: a 2 MiB file is refused before parsing, and by the CLI', async () => {
    const text = `${sandboxYaml}# ${'x'.repeat(2 * 1024 * 1024)}\n`;
    writeFileSync(join(dir, FILE), text);
    const r = loadConfig(FILE, { env: {}, cwd: dir });
    expect(r.errors.map(formatIssue)).toEqual([`${FILE}: the file is 2.0 MiB; a config file above 1.0 MiB is refused before it is read`]);
    await expectRefusedByCli(text);
  });

  it('hand-written: a file that is not UTF-8, and one of NUL bytes', async () => {
    const bad = Buffer.concat([Buffer.from(sandboxYaml), Buffer.from([0xff, 0xfe, 0x0a])]);
    writeFileSync(join(dir, FILE), bad);
    expect(loadConfig(FILE, { env: {}, cwd: dir }).errors.map(formatIssue)).toEqual([`${FILE}: the config file is not UTF-8 text`]);
    await expectRefusedByCli(bad);
    const nul = '\u0000'.repeat(1000);
    expect(placementProblems(nul, load(nul).errors)).toEqual([]);
    await expectRefusedByCli(nul);
  });

  // Each of these once took minutes (a scan per key, per issue or per alias), long enough to stall
  // a daemon reloading on SIGHUP; the suite's 30 s timeout fails them if that ever comes back.
  it.each([
    ['30,000 unknown keys', `${Array.from({ length: 30_000 }, (_, i) => `k${i}: ${i}`).join('\n')}\n__proto__: { polluted: 1 }\n`, /unknown key "k0"/],
    ['100,000 copies of one key', 'a: 1\n'.repeat(100_000), /duplicate key "a" \(first at line 1\)/],
    ['40,000 aliases of one anchor', `a: &a 1\n${Array.from({ length: 40_000 }, (_, i) => `b${i}: *a`).join('\n')}\n`, /anchors and aliases are not supported/],
    ['100,000 tab-indented lines', '\tx: 1\n'.repeat(100_000), /a tab is used for indentation/],
  ])('a large adversarial file (%s) is refused with places, at most 100 listed', (_name, text, says) => {
    const r = load(text);
    expect(r.config).toBeUndefined();
    expect(r.errors.length).toBeGreaterThan(0);
    expect(r.errors.length).toBeLessThanOrEqual(101);
    expect(r.errors.map(formatIssue).join('\n')).toMatch(says);
    if (r.errors.length === 101) expect(r.errors[100]?.message).toMatch(/^\d+ more errors not listed/);
    expect(placementProblems(text, r.errors)).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  const property = (base: string) =>
    fc.property(mutatedArb(base), (text) => {
      tally.generated++;
      let r: LoadResult;
      try {
        r = load(text);
      } catch (err) {
        throw new Error(`loadConfig threw or read two ways differently: ${String(err)} on:\n${text}`);
      }
      if (r.config === undefined) {
        tally.broken++;
        if (r.errors.length === 0) throw new Error(`no config and no error for:\n${text}`);
      } else tally.stillValid++;
      const problems = placementProblems(text, [...r.errors, ...r.warnings]);
      if (problems.length > 0) throw new Error(`${problems.join('\n')}\n--- text:\n${text}`);
    });

  it('1,000 mutations of the shipped demo config: never a throw, every issue placed in the file', () => {
    fc.assert(property(DEMO), { numRuns: 1_000 * SCALE });
  });

  it('400 mutations of a real sandbox config: same properties', () => {
    fc.assert(property(sandboxYaml), { numRuns: 400 * SCALE });
  });

  it('a sample of broken mutants is refused by check and once through the CLI', async () => {
    const sample = fc.sample(mutatedArb(sandboxYaml), { numRuns: 200, seed: 4 }).filter((t) => load(t).errors.length > 0).slice(0, 12);
    expect(sample.length).toBe(12);
    for (const text of sample) await expectRefusedByCli(text);
  });
});
