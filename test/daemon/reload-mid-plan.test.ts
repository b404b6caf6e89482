// SIGHUP while a plan is mid-way (its claim applied, its deposit waiting for the fresh summary read
// right before the signature), from the side of an operator changing the wallet or the rule under
// it (session 15's hostile look). The reload is made during that read: the deposit must be judged
// by what the config says once the read answers, not by what it said when the step began. And a
// wallet renamed under a turn must not get a second turn of its address. Driven in-process: a real
// runtime and state file, the in-process sandbox and its ledger.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/keys/signer.js';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';
import { TOKEN, transit } from '../support/vault-transit.js';
import { sandboxYaml, startInProcess, type InProcess } from './in-process.js';

const SOL = 1_000_000_000n;
const CLAIM_THEN_DEPOSIT = '      - claim\n      - deposit: { symbol: SOL2X, amount: "50%" }\n';

describe('a reload while a plan is mid-way', () => {
  let dir: string;
  let cleanup: () => void;
  let configPath: string;
  let wallets: TestWallet[];
  let app: InProcess | undefined;

  beforeEach(() => {
    ({ dir, cleanup } = tempDir('autoclaim-reload-mid-plan-'));
    wallets = makeWallets(dir, ['alpha', 'beta']);
    configPath = join(dir, 'autoclaim.yaml');
  });
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    cleanup();
  });

  const yaml = (list: TestWallet[], edit: (y: string) => string = (y) => y): string =>
    edit(sandboxYaml(list, { threshold: '0.000000001' }).replace('      - claim\n', CLAIM_THEN_DEPOSIT));
  const ops = (a: InProcess) => a.runtime.sandbox!.ledger().map((e) => e.op);

  /** Starts on `yaml(wallets)`, and makes `reload` happen during the deposit's own summary read (alpha's third read). */
  async function startWithReloadAtDeposit(reload: () => void): Promise<InProcess> {
    writeFileSync(configPath, yaml(wallets));
    const a = (app = await startInProcess({ dir, configPath }));
    const { client } = a.runtime;
    const read = client.walletSummary.bind(client);
    let reads = 0;
    client.walletSummary = async (address) => {
      const summary = await read(address);
      // alpha's turn: its poll, the claim's fresh read, then the deposit's, right before signing.
      if (address === wallets[0]!.address && ++reads === 3) reload();
      return summary;
    };
    return a;
  }

  it('enabled: false put on the rule: its deposit is held, not signed; enabled again, it goes once', async () => {
    const disabled = (y: string) => y.replace('  - name: sweep\n', '  - name: sweep\n    enabled: false\n');
    const a = await startWithReloadAtDeposit(() => {
      writeFileSync(configPath, yaml(wallets, disabled));
      expect(app!.daemon.reload()).toBe(true);
    });
    await a.daemon.runWallet('alpha');
    expect(ops(a)).toEqual(['claim']);
    const [plan] = await a.runtime.store.listPlans({ address: wallets[0]!.address });
    expect(plan?.steps.map((s) => s.state)).toEqual(['acknowledged', 'planned']);

    // Another turn while the rule is still off: still held.
    await a.daemon.runWallet('alpha');
    expect(ops(a)).toEqual(['claim']);

    writeFileSync(configPath, yaml(wallets));
    expect(a.daemon.reload()).toBe(true);
    await a.daemon.runWallet('alpha');
    await a.daemon.runWallet('alpha');
    expect(ops(a)).toEqual(['claim', 'deposit']);
  });

  it('enabled: false put on the rule while its signed deposit waits to go out: held back unsent; enabled again, it goes once', async () => {
    // The wallet's kill switch was asked again right before the first byte (the rate limiter's queue,
    // a 429's pause, a slow signer are minutes); the rule's was not, and its deposit went out after
    // the reload that switched the rule off had been applied.
    writeFileSync(configPath, yaml(wallets));
    const a = (app = await startInProcess({ dir, configPath }));
    const { client } = a.runtime;
    const send = client.send.bind(client);
    let switched = false;
    client.send = async (prepared, gate) => {
      // Signed and recorded `sending`, before the limiter lets it go (where the gate is asked).
      if (prepared.url.endsWith('/actions/deposit') && !switched) {
        switched = true;
        writeFileSync(configPath, yaml(wallets, (y) => y.replace('  - name: sweep\n', '  - name: sweep\n    enabled: false\n')));
        expect(a.daemon.reload()).toBe(true);
      }
      return send(prepared, gate);
    };
    await a.daemon.runWallet('alpha');
    expect(ops(a)).toEqual(['claim']);
    const [plan] = await a.runtime.store.listPlans({ address: wallets[0]!.address });
    expect(plan?.steps.map((s) => s.state)).toEqual(['acknowledged', 'planned']);

    writeFileSync(configPath, yaml(wallets));
    expect(a.daemon.reload()).toBe(true);
    await a.daemon.runWallet('alpha');
    await a.daemon.runWallet('alpha');
    expect(ops(a)).toEqual(['claim', 'deposit']);
  });

  it('the rule taken off the wallet’s rules: its deposit is skipped, as a rule no longer configured', async () => {
    // Another rule stays for alpha (one that never fires), and sweep stays for beta.
    const other = '  - name: other\n    when:\n      pending_sol: { gte: 1000000 }\n    do:\n      - claim\n';
    const off = (y: string) => y.replace(/( {2}- name: alpha\n {4}address: \S+\n {4}key: \{[^\n]*\}\n)/, '$1    rules: [other]\n').replace('safety:\n', `${other}safety:\n`);
    const a = await startWithReloadAtDeposit(() => {
      writeFileSync(configPath, yaml(wallets, off));
      expect(app!.daemon.reload()).toBe(true);
    });
    await a.daemon.runWallet('alpha');
    expect(ops(a)).toEqual(['claim']);
    const [plan] = await a.runtime.store.listPlans({ address: wallets[0]!.address });
    expect(plan?.steps.map((s) => s.state)).toEqual(['acknowledged', 'skipped']);
    expect(a.log.events('plan.skipped')[0]?.['reason']).toMatch(/rule sweep no longer applies to wallet alpha/);
  });

  it('the wallet removed from the config: its deposit is held, not signed with the key read before', async () => {
    const a = await startWithReloadAtDeposit(() => {
      writeFileSync(configPath, yaml([wallets[1]!]));
      expect(app!.daemon.reload()).toBe(true);
    });
    await a.daemon.runWallet('alpha');
    expect(ops(a)).toEqual(['claim']);
    const [plan] = await a.runtime.store.listPlans({ address: wallets[0]!.address });
    expect(plan?.steps.map((s) => s.state)).toEqual(['acknowledged', 'planned']);

    // Back in the config: the deposit goes, once.
    writeFileSync(configPath, yaml(wallets));
    expect(a.daemon.reload()).toBe(true);
    await a.daemon.runWallet('alpha');
    await a.daemon.runWallet('alpha');
    expect(ops(a)).toEqual(['claim', 'deposit']);
  });

  it('the wallet renamed while its turn runs: no second turn of its address', async () => {
    // No jitter: alpha's turn, first in the list, starts at once.
    const noJitter = (y: string) => y.replace('poll: "0 0 1 1 *"', 'poll: "0 0 1 1 *"\n  jitter: 0s');
    writeFileSync(configPath, yaml(wallets, noJitter));
    const a = (app = await startInProcess({ dir, configPath }));
    a.runtime.sandbox!.world.setWallet(wallets[0]!.address, { balanceLamports: 100n * SOL });
    const { client } = a.runtime;
    const read = client.walletSummary.bind(client);
    let reads = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    client.walletSummary = async (address) => {
      if (address === wallets[0]!.address) {
        reads++;
        await held;
      }
      return read(address);
    };
    await a.daemon.start();
    await expect.poll(() => reads).toBe(1);

    // alpha is now "alpha-renamed": the same address, its turn still held in its poll.
    writeFileSync(configPath, yaml(wallets, (y) => noJitter(y).replace('  - name: alpha\n', '  - name: alpha-renamed\n')));
    expect(a.daemon.reload()).toBe(true);
    expect(a.daemon.pollNow(['alpha-renamed']).polling).toEqual(['alpha-renamed']);
    await new Promise((r) => setTimeout(r, 50));
    expect(reads).toBe(1);
    expect(a.log.events('poll.overlap')).toHaveLength(1);
    release();
    await expect.poll(() => ops(a).filter((op) => op === 'deposit').length).toBe(1);
    expect(ops(a).filter((op) => op === 'claim')).toHaveLength(1);
  });

  it('two wallets’ addresses swapped while one’s turn runs and the other’s waits for a slot: no second turn of an address', async () => {
    // Two slots: gamma's turn and beta's hold them, alpha's waits. The swap gives alpha beta's
    // address; alpha's turn, once a slot frees, ran whatever its name now meant: beta's address,
    // whose turn was still running.
    const [gamma] = makeWallets(dir, ['gamma']) as [TestWallet];
    const [alpha, beta] = wallets as [TestWallet, TestWallet];
    const noJitter = (y: string) => y.replace('poll: "0 0 1 1 *"', 'poll: "0 0 1 1 *"\n  jitter: 0s');
    writeFileSync(configPath, yaml([gamma, beta, alpha], noJitter));
    const a = (app = await startInProcess({ dir, configPath, concurrency: 2 }));
    const { client } = a.runtime;
    const read = client.walletSummary.bind(client);
    const reads = new Map<string, number>();
    const gates = new Map<string, { open: () => void; opened: Promise<void> }>();
    for (const w of [gamma, beta]) {
      let open!: () => void;
      const opened = new Promise<void>((r) => (open = r));
      gates.set(w.address, { open, opened });
    }
    client.walletSummary = async (address) => {
      reads.set(address, (reads.get(address) ?? 0) + 1);
      await gates.get(address)?.opened;
      return read(address);
    };
    await a.daemon.start(); // gamma, first in the list, starts at once
    await expect.poll(() => reads.get(gamma.address)).toBe(1);
    a.daemon.pollNow(['beta', 'alpha']);
    await expect.poll(() => reads.get(beta.address)).toBe(1);

    // The names swapped (each key stays with its address): alpha is now beta's address, and beta alpha's.
    const swapped = (y: string) => noJitter(y).replace('- name: alpha\n', '- name: SWAP\n').replace('- name: beta\n', '- name: alpha\n').replace('- name: SWAP\n', '- name: beta\n');
    writeFileSync(configPath, yaml([gamma, beta, alpha], swapped));
    expect(a.daemon.reload()).toBe(true);
    gates.get(gamma.address)!.open();
    // alpha's turn now has a slot: it runs the address it was started for (now beta's name), not
    // the one its name now has, which beta's turn is still reading.
    await expect.poll(() => reads.get(alpha.address) ?? 0).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 50));
    expect(reads.get(beta.address)).toBe(1);
    gates.get(beta.address)!.open();
  });

  // Helper 36: a reload that moves the wallet's key to another backend while its plan is mid-way.
  // The deposit is signed by the backend the config names when it is signed, and only after that
  // backend's public key is fetched and found to derive the wallet's address: a Vault holding
  // another key is never asked to sign (the deposit refused, KEY_MISMATCH); one holding the key signs.
  for (const holds of ['its key', 'another key'] as const) {
    it(`the wallet moved to a Vault key holding ${holds} at the deposit: the address is checked before Vault signs`, async () => {
      const alpha = wallets[0]!;
      const vaultKey = holds === 'its key' ? alpha.secretKey64 : generateKeypair().secretKey64;
      const t = await transit({ seed: vaultKey.slice(0, 32), publicKey: vaultKey.slice(32) });
      try {
        const tokenFile = join(dir, 'vault-token');
        writeFileSync(tokenFile, TOKEN, { mode: 0o600 });
        const toVault = (y: string) => {
          const moved = y.replace(`key: { file: ${alpha.keyFile} }`, `key: { vault: { address: "${t.url}", key: treasury, token_file: ${tokenFile} } }`);
          expect(moved).not.toBe(y);
          return moved;
        };
        const a = await startWithReloadAtDeposit(() => {
          writeFileSync(configPath, yaml(wallets, toVault));
          expect(app!.daemon.reload()).toBe(true);
        });
        await a.daemon.runWallet('alpha');
        expect(a.runtime.signers.get(alpha.address)?.backend).toBe('vault');
        const signs = t.seen.filter((r) => r.method === 'POST');
        const [plan] = await a.runtime.store.listPlans({ address: alpha.address });
        if (holds === 'its key') {
          expect(ops(a)).toEqual(['claim', 'deposit']);
          expect(signs).toHaveLength(1);
        } else {
          expect(ops(a)).toEqual(['claim']);
          expect(signs).toEqual([]);
          expect(plan?.steps.map((s) => s.state)).toEqual(['acknowledged', 'rejected']);
          expect(a.log.events('action.refused')).toMatchObject([{ code: 'KEY_MISMATCH', backend: 'vault' }]);
        }
        expect(t.seen[0]).toMatchObject({ method: 'GET', url: '/v1/transit/keys/treasury' });
      } finally {
        await t.close();
      }
    });
  }
});
