// `autoclaim signer --check` and the signer's config errors: file:line:col and exit 78.
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/keys/signer.js';
import { runCli } from '../e2e/helpers.js';
import { TOKEN, transit } from '../support/vault-transit.js';
import { signerSetup, signerYaml, type SignerSetup } from './support.js';

describe('autoclaim signer --check', () => {
  let setup: SignerSetup;
  afterEach(() => setup.cleanup());

  it('validates a policy and its keys, and prints what each key may sign', async () => {
    setup = signerSetup();
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    // Only the warning that deposit's message is mint's, withdraw's and burn's (the next test).
    expect(r.stderr.split('\n').filter((l) => l !== '' && !/^warning: .*keys\[0\]\.policy\.ops: mint, withdraw, burn have the message template of deposit/.test(l))).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`treasury  ${setup.wallets[0]!.address}`);
    expect(r.stdout).toContain('ops claim, deposit; symbols SOL2X; at most 10 SOL an action, 25 SOL a day; one claim per epoch');
    expect(r.stdout).toMatch(/valid \(1 key\(s\)/);
  });

  it('warns that a policy cannot refuse an op whose message template is an allowed op’s; not once they differ or all are allowed', async () => {
    setup = signerSetup();
    const check = () => runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    // The default templates of deposit, mint, withdraw and burn are one: a deposit signature is a burn's.
    const r = await check();
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^warning: .*signer\.yaml:\d+:\d+ keys\[0\]\.policy\.ops: mint, withdraw, burn have the message template of deposit \("\{wallet\}\|\{symbol\}\|\{amount\}\|\{ts\}"\): a deposit signature is also one for mint, withdraw, burn/m);
    writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets, policy: { ops: '[claim, deposit, mint, withdraw, burn]' } }));
    expect((await check()).stderr).toBe('');
    // A deposit template of its own (the server signs the op): the others share one no allowed op has.
    writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets, extra: 'templates:\n  deposit: "{op}|{wallet}|{symbol}|{amount}|{ts}"\n' }));
    expect((await check()).stderr).toBe('');
    // {op} in a shared template is each op's own text.
    writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets, extra: `templates:\n${['deposit', 'mint', 'withdraw', 'burn'].map((op) => `  ${op}: "{wallet}|{op}|{symbol}|{amount}|{ts}"\n`).join('')}` }));
    expect((await check()).stderr).toBe('');
  });

  it('warns that epochs: any lets a client name a new epoch for every claim', async () => {
    setup = signerSetup();
    writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets, policy: { ops: '[claim, deposit, mint, withdraw, burn]' }, extra: 'epochs: any\n' }));
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^warning: .*signer\.yaml:\d+:\d+ epochs: any: a client may have a claim signed for every date it names/m);
  });

  it('refuses a template whose placeholders run together: the caps read one action, the server may read another', async () => {
    setup = signerSetup();
    writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets, policy: { ops: '[claim, deposit, mint, withdraw, burn]' }, extra: 'templates:\n  deposit: "{wallet}|{symbol}{amount}|{ts}"\n' }));
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/signer\.yaml:\d+:\d+ templates\.deposit: \{symbol\}\{amount\} run together, so one message is more than one action/);
    // With a separator it is a valid template again.
    writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets, policy: { ops: '[claim, deposit, mint, withdraw, burn]' }, extra: 'templates:\n  deposit: "{wallet}|{symbol}/{amount}|{ts}"\n' }));
    expect((await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir })).code).toBe(0);
  });

  it('refuses a template whose separator either value beside it can hold: ETH 2.5 and ETH.2 5 both sign "ETH.2.5"', async () => {
    setup = signerSetup();
    const check = async (deposit: string) => {
      writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets, policy: { ops: '[claim, deposit, mint, withdraw, burn]' }, extra: `templates:\n  deposit: "${deposit}"\n` }));
      return runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    };
    const r = await check('{wallet}|{symbol}.{amount}|{ts}');
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/signer\.yaml:\d+:\d+ templates\.deposit: \{symbol\}\.\{amount\}: its separator can be part of the values beside it, so one message is more than one action/);
    // Read from the right, each value's start is found: an amount holds no "-", a ts no ".".
    expect((await check('{wallet}|{symbol}-{amount}|{ts}')).code).toBe(0);
    expect((await check('{wallet}|{symbol}-{amount}.{ts}')).code).toBe(0);
    // The wallet's end found from the left (base58 holds no "."), the rest from the right.
    expect((await check('{wallet}.{symbol}-{amount}.{ts}')).code).toBe(0);
    // From the left the amount's end is not found ("." is in it), from the right the symbol's start.
    expect((await check('{wallet}|{amount}.{symbol}|{ts}')).code).toBe(78);
  });

  it('refuses a broken policy with every problem at file:line:col, exit 78', async () => {
    setup = signerSetup();
    const text = signerYaml({ socket: setup.socket, wallets: setup.wallets, policy: { perAction: '0.0000000001', symbols: '[]' }, extra: 'max_ts_skew: 1 hour\n' }).replace('ops: [claim, deposit]', 'ops: [claim, deposit]\n      max_sol_per_dya: 3');
    writeFileSync(setup.configFile, text);
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/signer\.yaml:4:1 max_ts_skew: expected a duration/);
    expect(r.stderr).toMatch(/signer\.yaml:11:7 keys\[0\]\.policy\.max_sol_per_dya: unknown key "max_sol_per_dya" \(did you mean "max_sol_per_day"\?\)/);
  });

  it('refuses caps finer than a lamport, a missing symbol list and a key that is not the address, at their places', async () => {
    setup = signerSetup({ names: ['treasury', 'ops'], policy: { perAction: '0.0000000001', symbols: '[]' } });
    // The second entry's key file is the first's.
    writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets, policy: { perAction: '0.0000000001', symbols: '[]' } }).replace('./keys/ops.json', './keys/treasury.json'));
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/signer\.yaml:\d+:7 keys\[0\]\.policy\.max_sol_per_action: 0\.0000000001 is not a SOL amount exact to the lamport/);
    expect(r.stderr).toMatch(/keys\[0\]\.policy\.symbols: required when ops include/);
  });

  it("refuses a cap the journal cannot count (above 2^63 − 1 lamports) at its place, exit 78: such a cap let an amount through to a journal that refused it as INTERNAL (helper 38)", async () => {
    setup = signerSetup({ policy: { perAction: '9223372036.854775808', perDay: '10000000000' } });
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/signer\.yaml:\d+:7 keys\[0\]\.policy\.max_sol_per_action: 9223372036\.854775808 is more than the signer's journal can count \(at most 9223372036\.854775807 SOL/);
    expect(r.stderr).toMatch(/signer\.yaml:\d+:7 keys\[0\]\.policy\.max_sol_per_day: 10000000000 is more than the signer's journal can count/);
    // The largest cap it can count is a cap.
    setup.cleanup();
    setup = signerSetup({ policy: { perAction: '9223372036.854775807', perDay: '9223372036.854775807' } });
    const ok = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(ok.code).toBe(0);
  });

  it('names a key whose address is not the configured one', async () => {
    setup = signerSetup({ names: ['treasury', 'ops'] });
    writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets }).replace('./keys/ops.json', './keys/treasury.json'));
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/signer\.yaml:\d+:5 keys\[1\]\.key: key ops: .* is the key of address .* but wallet ops is configured with address/);
  });

  it('refuses a signer-service key inside signer.yaml at its file:line:col, exit 78', async () => {
    setup = signerSetup();
    writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets, key: () => '{ signer: { socket: /run/other/signer.sock, key: treasury } }' }));
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/signer\.yaml:7:12 keys\[0\]\.key\.signer: the signer service holds keys itself/);
  });

  it('checks a Vault key: shown with its backend when it is the address’s; exit 78 when its public key is another address’s', async () => {
    setup = signerSetup();
    const mine = generateKeypair();
    const t = await transit({ seed: mine.secretKey64.slice(0, 32), publicKey: mine.secretKey64.slice(32) });
    try {
      const key = `{ vault: { address: "${t.url}", key: treasury, token_env: VAULT_TOKEN } }`;
      writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: [{ ...setup.wallets[0]!, address: mine.address }], key: () => key }));
      const ok = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir, env: { VAULT_TOKEN: TOKEN } });
      expect(ok.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('warning: '))).toEqual([]);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain(`treasury  ${mine.address}  (vault ${t.url} transit/treasury)`);
      // The same key configured for another address: its public key does not derive it.
      writeFileSync(setup.configFile, signerYaml({ socket: setup.socket, wallets: setup.wallets, key: () => key }));
      const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir, env: { VAULT_TOKEN: TOKEN } });
      expect(r.code).toBe(78);
      expect(r.stderr).toMatch(/keys\[0\]\.key: key treasury: the vault backend: .* is the key of address .*, but the wallet is configured with address/);
      expect(r.stderr).not.toContain(TOKEN);
    } finally {
      await t.close();
    }
  });

  it('refuses a journal given both ways, and a PostgreSQL URL that holds a password', async () => {
    setup = signerSetup({ state: 'path: ./journal.db\n  url: postgres://signer:hunter2@127.0.0.1:5432/journal' });
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/signer\.yaml:\d+:\d+ state: give exactly one of path .* or url/);
    expect(r.stderr).toMatch(/state\.url: holds a password; remove it and use PGPASSWORD/);
  });

  it('warns of a PostgreSQL journal on another machine reached without TLS: its caps and epochs could be altered on the way', async () => {
    setup = signerSetup({ state: 'url: postgres://signer@db.internal:5432/journal' });
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(r.stderr).toMatch(/^warning: .*signer\.yaml:\d+:\d+ state\.url: reaches db\.internal without TLS/m);
    setup.cleanup();
    setup = signerSetup({ state: 'url: postgres://signer@db.internal:5432/journal?sslmode=verify-full' });
    const tls = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(tls.stderr).not.toMatch(/without TLS/);
    expect(tls.code).toBe(r.code);
  });

  it('refuses state.mark_file beside a SQLite journal, whose mark is its own <path>.mark', async () => {
    setup = signerSetup({ state: 'path: ./journal.db\n  mark_file: ./journal.mark' });
    const r = await runCli(['signer', '--check', '--config', setup.configFile], { cwd: setup.dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/signer\.yaml:\d+:\d+ state\.mark_file: only with state\.url/);
  });
});
