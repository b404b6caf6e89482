// `check` runs exactly the start-up pipeline: exit 78 with file:line:col for a bad config, the
// summary and exit 0 for a good one; and what it refuses, `once` refuses too.
import { chmodSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configYaml, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

describe('check', () => {
  let dir: string;
  let cleanup: () => void;
  let wallets: TestWallet[];

  beforeEach(() => {
    ({ dir, cleanup } = tempDir());
    wallets = makeWallets(dir, ['alpha', 'beta']);
  });
  afterEach(() => cleanup());

  it('prints the summary and exits 0 for a valid config whose keys load', async () => {
    const config = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets });
    const r = await runCli(['check', '--config', config], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(wallets[0]!.address);
    expect(r.stdout).toMatch(/valid \(2 wallet\(s\), 1 rule\(s\), all keys load and match\)/);
    expect(r.stdout).not.toContain('canary-apikey');
  });

  it('shows the signing setup: header names, templates per operation, encoding, and the unpublished claim message', async () => {
    const config = writeConfig(dir, {
      baseUrl: 'http://127.0.0.1:9/v1',
      wallets,
      apiExtra: '  header_prefix: x-acme\n  signature_encoding: hex\n  endpoints:\n    claim: { message: "{wallet}|{ts}|{epoch}" }\n',
    });
    const r = await runCli(['check', '--config', config], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('signing   Ed25519 over the UTF-8 message, signature encoded hex\n');
    expect(r.stdout).toContain('authorization: Bearer <API key>, x-acme-ts: <Unix seconds, the {ts} signed>, x-acme-wallet: <wallet address>');
    expect(r.stdout).toMatch(/claim +POST \/rewards\/claim +signs \{wallet\}\|\{ts\}\|\{epoch\}\n/);
    expect(r.stdout).toMatch(/deposit +POST \/actions\/deposit +signs \{wallet\}\|\{symbol\}\|\{amount\}\|\{ts\}\n/);
    expect(r.stdout).toMatch(/mint +POST \/actions\/mint +signs /);
    expect(r.stdout).toMatch(/does not publish the claim message; confirm it .*autoclaim doctor/);
    expect(r.stdout).not.toContain('canary-apikey');
  });

  it('names file, line, column and key of every problem and exits 78', async () => {
    const text = configYaml({ baseUrl: 'http://127.0.0.1:9/v1', wallets })
      .replace('pending_sol: { gte: 0.5 }', 'pending_sol: { gte: lots }')
      .replace('max_sol_per_action: 100', 'max_sol_per_actoin: 100');
    writeFileSync(`${dir}/autoclaim.yaml`, text);
    const r = await runCli(['check', '--config', `${dir}/autoclaim.yaml`], { cwd: dir });
    expect(r.code).toBe(78);
    const line = text.split('\n').findIndex((l) => l.includes('gte: lots')) + 1;
    expect(r.stderr).toMatch(new RegExp(`autoclaim\\.yaml:${line}:\\d+ rules\\[0\\]\\.when\\.pending_sol(\\.gte)?: `));
    expect(r.stderr).toMatch(/safety/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  // Issue 25 finding 1: with shared state, a claim judged not applied before its first request
  // can no longer be accepted may be claimed twice; check and start refuse that claim_settle.
  it('refuses api.claim_settle shorter than ts_window + 1m with state.url (exit 78, at check and at start); alone, warns', async () => {
    const shared = configYaml({ baseUrl: 'http://127.0.0.1:9/v1', wallets, apiExtra: '  claim_settle: 60s\n' }).replace(
      '  path: ./state/autoclaim.db\n',
      '  url: postgres://autoclaim@127.0.0.1:9/autoclaim\n',
    );
    expect(shared).toContain('url: postgres://');
    writeFileSync(`${dir}/shared.yaml`, shared);
    const line = shared.split('\n').findIndex((l) => l.includes('claim_settle: 60s')) + 1;
    for (const command of ['check', 'once']) {
      const r = await runCli([command, '--config', `${dir}/shared.yaml`], { cwd: dir });
      expect(r.code, `${command}: ${r.stderr}`).toBe(78);
      expect(r.stderr).toMatch(new RegExp(`shared\\.yaml:${line}:\\d+ api\\.claim_settle: with shared state \\(state\\.url\\), api\\.claim_settle \\(1m\\) is shorter than api\\.ts_window \\+ 1m \\(6m\\)`));
    }

    const alone = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets, apiExtra: '  claim_settle: 60s\n' });
    const r = await runCli(['check', '--config', alone], { cwd: dir });
    expect(r.code).toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/api\.claim_settle: api\.claim_settle \(1m\) is shorter than api\.ts_window \+ 1m/);
  });

  it('exits 78 for a missing config file', async () => {
    const r = await runCli(['check', '--config', `${dir}/nope.yaml`], { cwd: dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('nope.yaml');
  });

  it('refuses a world-readable key file, at check and at start, naming the file and the fix', async () => {
    const config = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets });
    chmodSync(wallets[1]!.keyFile, 0o644);
    const check = await runCli(['check', '--config', config], { cwd: dir });
    expect(check.code).toBe(78);
    expect(check.stderr).toContain(wallets[1]!.keyFile);
    expect(check.stderr).toContain('chmod 600');
    const once = await runCli(['once', '--config', config], { cwd: dir });
    expect(once.code).toBe(78);
    expect(once.stderr).toContain('chmod 600');
  });

  it('refuses a real API without an API key, at check and at start', async () => {
    const config = writeConfig(dir, { baseUrl: 'http://127.0.0.1:9/v1', wallets });
    const env = { AUTOCLAIM_API_KEY: '' };
    const check = await runCli(['check', '--config', config], { cwd: dir, env });
    expect(check.code).toBe(78);
    expect(check.stderr).toMatch(/no API key/);
    const once = await runCli(['once', '--config', config], { cwd: dir, env });
    expect(once.code).toBe(78);
  });

  it('is a usage error (exit 2) to call an unknown command or option', async () => {
    expect((await runCli(['frobnicate'], { cwd: dir })).code).toBe(2);
    expect((await runCli(['once', '--bogus'], { cwd: dir })).code).toBe(2);
    expect((await runCli([], { cwd: dir })).code).toBe(2);
  });
});
