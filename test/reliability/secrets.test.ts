// Secrets (issue 4): one canary API key and canary wallet keys (a key file and a variable) go
// through a representative run of everything — claims and deposits, faults (429, 5xx,
// apply_then_drop, a server echoing the bearer), check, status, actions, wallet, leaderboard, key,
// a bad config, key errors, and a daemon SIGKILLed mid-request — and then every captured stdout
// and stderr line and every file of the state folder (db, wal, shm, lock) is searched for the
// secrets in every encoding they could be printed in. None may be found.
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { buildOnce } from '../e2e/build.js';
import { CANARY_API_KEY, configYaml, makeWallets, runCli, spawnCli, tempDir, type Child, type CliResult, type TestWallet } from '../e2e/helpers.js';

const SOL = 1_000_000_000n;

beforeAll(() => buildOnce(), 120_000);

/** Every printable form of a secret key (64 bytes) and of its seed (the first 32). */
function keyEncodings(secret64: Uint8Array): string[] {
  const forms = (bytes: Uint8Array): string[] => {
    const b = Buffer.from(bytes);
    const list = [...bytes];
    return [
      bs58.encode(bytes),
      b.toString('hex'),
      b.toString('hex').toUpperCase(),
      b.toString('base64'),
      b.toString('base64url'),
      JSON.stringify(list),
      JSON.stringify(list, null, 1).replace(/\n\s*/g, ' '),
      list.join(','),
      list.join(', '),
    ];
  };
  return [...forms(secret64), ...forms(secret64.subarray(0, 32))];
}

describe('secrets never leave', () => {
  let sandbox: Sandbox;
  let dir: string;
  let cleanup: () => void;
  let alpha: TestWallet; // key file: the canary key file
  let beta: TestWallet; // key in a variable
  let config: string;
  let env: Record<string, string>;
  const outputs: Array<{ what: string; text: string }> = [];
  const stateSnapshots: Array<{ what: string; name: string; bytes: Buffer }> = [];
  const children: Child[] = [];
  let betaText: string;

  const cli = async (what: string, argv: string[], opts: { config?: string; env?: Record<string, string> } = {}): Promise<CliResult> => {
    const r = await runCli([...argv, '--config', opts.config ?? config], { cwd: dir, env: { ...env, ...opts.env } });
    outputs.push({ what: `${what} stdout`, text: r.stdout }, { what: `${what} stderr`, text: r.stderr });
    return r;
  };
  const snapshotState = (what: string) => {
    const stateDir = join(dir, 'state');
    for (const name of readdirSync(stateDir)) stateSnapshots.push({ what, name, bytes: readFileSync(join(stateDir, name)) });
  };

  beforeAll(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-secrets-'));
    [alpha, beta] = makeWallets(dir, ['alpha', 'beta']) as [TestWallet, TestWallet];
    betaText = bs58.encode(beta.secretKey64);
    // Two tests move the shared sandbox's epoch a day each, past tomorrow: its fast epochs (SPEC §2's exemption).
    env = { BETA_SECRET: betaText, AUTOCLAIM_SANDBOX_EPOCHS: 'fast' };
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [alpha, beta].map((w) => ({ address: w.address, pendingLamports: SOL, accrualLamportsPerSec: 0n, balanceLamports: 0n })),
    });
    config = join(dir, 'autoclaim.yaml');
    writeFileSync(config, configYaml({ baseUrl: sandbox.url, wallets: [alpha, beta] }).replace('{ file: ./keys/beta.json }', '{ env: BETA_SECRET }'));
  });
  afterAll(async () => {
    for (const c of children) await c.stop();
    await sandbox.close();
    cleanup();
  });

  it('once: claims and deposits', async () => {
    const r = await cli('once', ['once']);
    expect(r.code).toBe(0);
    expect(sandbox.ledger().map((e) => e.op).sort()).toEqual(['claim', 'claim', 'deposit', 'deposit']);
    snapshotState('after once');
  });

  it('once under faults: 429, 5xx, apply_then_drop, and a server echoing the bearer into what it returns', async () => {
    sandbox.advanceEpoch();
    for (const w of [alpha, beta]) sandbox.world.setWallet(w.address, { pendingLamports: 2n * SOL });
    const echo = `Bearer ${CANARY_API_KEY}`;
    sandbox.addFault({ match: { op: 'summary', wallet: alpha.address }, kind: 'rate_limit', retryAfterSec: 0 });
    sandbox.addFault({ match: { op: 'claim', wallet: alpha.address }, kind: 'status5xx_before', status: 503 });
    sandbox.addFault({ match: { op: 'claim', wallet: beta.address }, kind: 'malformed', body: JSON.stringify({ status: 'ok', claimed_sol: 2, tx: 'echo-tx', debug: { authorization: echo } }) });
    sandbox.addFault({ match: { op: 'deposit', wallet: beta.address }, kind: 'apply_then_drop' });
    const r = await cli('faulty once', ['once']);
    expect(r.code).toBe(1); // beta's deposit is unknown
    const unknown = r.events.filter((e) => e.event === 'action.unknown');
    expect(unknown.some((e) => e.kind === 'deposit')).toBe(true);
    snapshotState('after faults');
  });

  it('check, status, actions, actions resolve, wallet, leaderboard, key', async () => {
    expect((await cli('check', ['check'])).code).toBe(0);
    expect((await cli('status --json', ['status', '--json'])).code).toBe(0);
    expect((await cli('status', ['status'])).code).toBe(0);
    const actions = await cli('actions --json', ['actions', '--json']);
    expect(actions.code).toBe(0);
    expect(actions.stdout).toContain('echo-tx');
    expect((await cli('actions', ['actions'])).code).toBe(0);
    const unknown = await cli('actions --state unknown --json', ['actions', '--state', 'unknown', '--json']);
    const plans = (JSON.parse(unknown.stdout) as { plans: Array<{ steps: Array<{ id: number; kind: string; state: string }> }> }).plans;
    const stepId = plans.flatMap((p) => p.steps).find((s) => s.state === 'unknown' && s.kind === 'deposit')?.id;
    expect(stepId).toBeDefined();
    expect((await cli('actions resolve', ['actions', 'resolve', String(stepId), '--applied', '--note', 'checked on chain'])).code).toBe(0);

    // The server echoes the bearer into a summary: `wallet --json` prints the body, redacted.
    sandbox.addFault({
      match: { op: 'summary' },
      kind: 'malformed',
      body: JSON.stringify({ address: alpha.address, epoch: sandbox.world.epoch(), pending_sol: 0, lifetime_sol: 3, rank: 1, tier: 'gold', breakdown: [], echo: `Bearer ${CANARY_API_KEY}` }),
    });
    const wallet = await cli('wallet --json', ['wallet', alpha.address, '--json']);
    expect(wallet.code).toBe(0);
    expect(wallet.stdout).toContain('[REDACTED]');
    expect((await cli('wallet', ['wallet', beta.address])).code).toBe(0);
    expect((await cli('leaderboard', ['leaderboard', '--json'])).code).toBe(0);
    const key = await cli('key file', ['key', alpha.keyFile]);
    expect(key.stdout.trim()).toBe(alpha.address);
    expect((await cli('key env', ['key', 'env:BETA_SECRET'])).stdout.trim()).toBe(beta.address);
    snapshotState('after read commands');
  });

  it('bad configs: the API key and key material pasted into the YAML, and as names, are refused without being echoed', async () => {
    const bad = join(dir, 'bad.yaml');
    const base = readFileSync(config, 'utf8');
    const variants = [
      base.replace('timeout_ms: 2000', `timeout_ms: 2000\n  api_key: ${CANARY_API_KEY}`),
      base.replace('{ env: BETA_SECRET }', betaText),
      base.replace('{ env: BETA_SECRET }', `{ env: BETA_SECRET, secret: "${betaText}" }`),
      `${base}${CANARY_API_KEY}: 1\n`, // pasted as a key: the unknown-key message names it
      `${base}x: *${CANARY_API_KEY}\n`, // as an alias name
      base.replace('timeout_ms: 2000', `timeout_ms: 2000\n api_key: "${CANARY_API_KEY}`), // broken YAML around it
    ];
    const codes: number[] = [];
    for (const [i, text] of variants.entries()) {
      writeFileSync(bad, text);
      codes.push((await cli(`bad config ${i} check`, ['check'], { config: bad })).code);
      codes.push((await cli(`bad config ${i} once`, ['once'], { config: bad })).code);
    }
    expect(codes).toEqual(new Array<number>(codes.length).fill(78));

    // As a YAML tag it is refused at its place (a config has no tags), and the tag is not quoted.
    writeFileSync(bad, base.replace('max_sol_per_action: 100', `max_sol_per_action: !${CANARY_API_KEY} 100`));
    const tagged = await cli('tagged config check', ['check'], { config: bad });
    expect(tagged.code).toBe(78);
    expect(tagged.stderr).toMatch(/safety\.max_sol_per_action: a tag \(!…\) is not supported/);
  });

  it('key errors: a world-readable key file, a corrupt variable, a key for another address', async () => {
    chmodSync(alpha.keyFile, 0o644);
    expect((await cli('key 0644 check', ['check'])).code).toBe(78);
    expect((await cli('key 0644 once', ['once'])).code).toBe(78);
    chmodSync(alpha.keyFile, 0o600);
    const corrupt = { BETA_SECRET: `${betaText.slice(0, 20)}0${betaText.slice(20)}` };
    expect((await cli('corrupt variable check', ['check'], { env: corrupt })).code).toBe(78);
    expect((await cli('corrupt variable once', ['once'], { env: corrupt })).code).toBe(78);
    const swapped = { BETA_SECRET: bs58.encode(alpha.secretKey64) };
    const r = await cli('mismatch check', ['check'], { env: swapped });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/is the key of address/);
    expect((await cli('key of a bad variable', ['key', 'env:BETA_SECRET'], { env: corrupt })).code).toBe(78);
  });

  it('a daemon SIGKILLed while a claim is on the wire, then recovered', async () => {
    // An earlier case may have left a claim unknown (and not yet settled): no new claim of that
    // wallet is signed until it is (claim_in_doubt), so settle it as an operator would.
    const listed = await cli('unknown steps', ['actions', '--json', '--state', 'unknown']);
    const unknown = (JSON.parse(listed.stdout) as { plans: Array<{ steps: Array<{ id: number; state: string }> }> }).plans
      .flatMap((p) => p.steps)
      .filter((st) => st.state === 'unknown');
    for (const st of unknown) expect((await cli('resolve', ['actions', 'resolve', String(st.id), '--applied'])).code).toBe(0);
    sandbox.advanceEpoch();
    for (const w of [alpha, beta]) sandbox.world.setWallet(w.address, { pendingLamports: 3n * SOL });
    sandbox.addFault({ match: { op: 'claim', wallet: alpha.address }, kind: 'apply_then_hang' });
    const d = spawnCli(['run', '--config', config], { cwd: dir, env });
    children.push(d);
    await d.waitFor((e) => e.event === 'action.sent' && e.kind === 'claim' && e.wallet === 'alpha');
    d.proc.kill('SIGKILL');
    expect((await d.exited).signal).toBe('SIGKILL');
    outputs.push({ what: 'killed daemon stdout', text: d.stdout() }, { what: 'killed daemon stderr', text: d.stderr() });
    snapshotState('after SIGKILL');

    const r = await cli('recovery once', ['once']);
    expect(r.events.some((e) => e.event === 'action.reconciled' || e.event === 'action.unknown')).toBe(true);
    snapshotState('after recovery');
  });

  it('an API key shorter than 16 characters is refused at check and at start, naming its source, not its value', async () => {
    const short = 'shortkey-12c';
    for (const command of ['check', 'once']) {
      const r = await cli(`short API key ${command}`, [command], { env: { AUTOCLAIM_API_KEY: short } });
      expect(r.code).toBe(78);
      expect(r.stderr).toContain('$AUTOCLAIM_API_KEY');
      expect(r.stderr).toContain('shorter than 16 characters');
      expect(r.stderr).not.toContain(short);
      expect(r.stdout).not.toContain(short);
    }
  });

  it('no secret in any output or state file, in any encoding', () => {
    // A piece of the key is as bad as the key: a message cut through it (issue 11) leaks the rest.
    const keyPieces = new Set<string>();
    for (let i = 0; i + 10 <= CANARY_API_KEY.length; i++) keyPieces.add(CANARY_API_KEY.slice(i, i + 10));
    const secrets: Array<{ what: string; value: string }> = [
      { what: 'API key', value: CANARY_API_KEY },
      ...[...keyPieces].map((value) => ({ what: `API key piece ${value}`, value })),
      { what: 'API key base64', value: Buffer.from(CANARY_API_KEY).toString('base64') },
      ...keyEncodings(alpha.secretKey64).map((value) => ({ what: 'key file material', value })),
      ...keyEncodings(beta.secretKey64).map((value) => ({ what: 'key variable material', value })),
    ];
    const rawSeeds = [alpha, beta].map((w) => Buffer.from(w.secretKey64.subarray(0, 32)));
    expect(outputs.length).toBeGreaterThan(60);
    const seen = new Set(stateSnapshots.map((s) => s.name.replace(/^autoclaim\.db/, 'db')));
    for (const f of ['db', 'db-wal', 'db-shm', 'db.lock', 'db.lock.json']) expect(seen).toContain(f);

    const found: string[] = [];
    for (const o of outputs) for (const s of secrets) if (o.text.includes(s.value)) found.push(`${s.what} in ${o.what}`);
    for (const f of stateSnapshots) {
      const text = f.bytes.toString('latin1');
      for (const s of secrets) if (text.includes(s.value)) found.push(`${s.what} in ${f.name} (${f.what})`);
      for (const seed of rawSeeds) if (f.bytes.includes(seed)) found.push(`raw seed bytes in ${f.name} (${f.what})`);
    }
    console.info(
      `secrets: ${secrets.length} encodings + ${rawSeeds.length} raw seeds searched in ${outputs.length} captured streams ` +
        `(${outputs.reduce((n, o) => n + o.text.length, 0)} chars) and ${stateSnapshots.length} state-file snapshots; found ${found.length}`,
    );
    expect(found).toEqual([]);
    // The canary did pass through: the redaction marker shows where it was scrubbed.
    expect(outputs.some((o) => o.text.includes('[REDACTED]'))).toBe(true);
  });
});
