// What the tests of the daemon on shared PostgreSQL state start from: a temp dir with real keys, the
// sandbox on loopback with every wallet at 1 SOL pending and nothing accruing, a config naming them,
// and the environment that points the CLI at a fresh database (AUTOCLAIM_STATE_URL).
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, makeWallets, tempDir, writeConfig, type ConfigParts, type TestWallet } from '../e2e/helpers.js';
import { createDatabase } from '../support/postgres.js';

export const SOL = 1_000_000_000n;

export interface SharedWorld {
  dir: string;
  sandbox: Sandbox;
  wallets: TestWallet[];
  /** The config file's path. */
  config: string;
  /** The database's URL (also in env). */
  url: string;
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export async function sharedWorld(names: string[], parts: Omit<ConfigParts, 'baseUrl' | 'wallets'> = {}): Promise<SharedWorld> {
  const { dir, cleanup } = tempDir();
  const wallets = makeWallets(dir, names);
  const sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    defaultAccrualLamportsPerSec: 0n,
    wallets: wallets.map((w) => ({ address: w.address, pendingLamports: SOL, accrualLamportsPerSec: 0n, balanceLamports: 0n })),
  });
  const config = writeConfig(dir, { baseUrl: sandbox.url, wallets, ...parts });
  const url = await createDatabase();
  return {
    dir,
    sandbox,
    wallets,
    config,
    url,
    env: { AUTOCLAIM_API_KEY: CANARY_API_KEY, AUTOCLAIM_STATE_URL: url },
    close: async () => {
      await sandbox.close();
      cleanup();
    },
  };
}
