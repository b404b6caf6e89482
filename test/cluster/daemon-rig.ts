// What the cluster tests that run real daemons beside one sandbox share: a poll-until with a
// deadline, and an afterEach that kills every daemon they started, closes the sandbox and removes
// the temporary directory, whatever the test did before it failed; and the world they start from.
import { afterEach } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, makeWallets, tempDir, type Child, type TestWallet } from '../e2e/helpers.js';

export const SOL = 1_000_000_000n;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export interface DaemonRig {
  /** Daemons started: each is killed (SIGKILL) after the test. */
  children: Child[];
  sandbox: Sandbox | undefined;
  /** Removes the test's temporary directory. */
  cleanup: () => void;
}

/** A rig torn down after each test of the file that calls it (at its top level). */
export function daemonRig(): DaemonRig {
  const rig: DaemonRig = { children: [], sandbox: undefined, cleanup: () => {} };
  afterEach(async () => {
    for (const c of rig.children.splice(0)) c.proc.kill('SIGKILL');
    await rig.sandbox?.close();
    rig.sandbox = undefined;
    rig.cleanup();
    rig.cleanup = () => {};
  });
  return rig;
}

/**
 * A temporary directory with one key file per name, and a sandbox in which each wallet has 1 SOL
 * pending, gaining `accrualLamportsPerSec`; both are the rig's to tear down after the test.
 */
export async function startWorld(rig: DaemonRig, prefix: string, names: string[], accrualLamportsPerSec = 0n): Promise<{ dir: string; wallets: TestWallet[]; sandbox: Sandbox }> {
  const t = tempDir(prefix);
  rig.cleanup = t.cleanup;
  const wallets = makeWallets(t.dir, names);
  rig.sandbox = await startSandbox({
    apiKey: CANARY_API_KEY,
    defaultAccrualLamportsPerSec: 0n,
    wallets: wallets.map((w) => ({ address: w.address, pendingLamports: SOL, accrualLamportsPerSec, balanceLamports: 0n })),
  });
  return { dir: t.dir, wallets, sandbox: rig.sandbox };
}
