// The demo world behind `npm start` (api.base_url: sandbox): the configured wallets that are demo
// wallets get their (publicly known, sandbox-only) keys written on first use into the demo key
// folder, `demo-keys` beside the state file, and nowhere else: a typo in a key path must read as a
// missing key, not create files wherever it points. The world has one wallet already over a typical
// threshold, one that gets there within minutes, and one that stays below, so a new user sees
// polls, a rule firing, a claim and a compounding deposit.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { AppConfig, Lamports } from '../domain.js';
import type { Logger } from '../log/logger.js';
import { demoWalletAddress, demoWalletKeyPair } from './derive.js';
import type { SandboxOptions } from './server.js';
import type { RateLimitOptions } from './stats.js';

const DEMO_INDEX_RANGE = 64;

/**
 * The real service's published limit for a client (SPEC §1, §6): the demo sandboxes (`npm start`'s
 * and `autoclaim sandbox`) keep it as it does, so a client that does not keep to it meets its 429s
 * here first, not on the real service.
 */
export const PUBLISHED_RATE_LIMIT: Readonly<RateLimitOptions> = Object.freeze({ perMinute: 500, burst: 100 });

/** Starting pending rewards and accrual factor (× sandbox.accrual) by wallet position. */
const PROFILES: Array<{ pending: Lamports; accrualTimes10: bigint }> = [
  { pending: 80_000_000n, accrualTimes10: 20n }, // over the demo threshold at the first poll
  { pending: 30_000_000n, accrualTimes10: 10n }, // crosses it within a minute or two
  { pending: 0n, accrualTimes10: 1n }, // stays below for a long while
];

function demoWalletIndex(address: string): number | undefined {
  for (let i = 0; i < DEMO_INDEX_RANGE; i++) if (demoWalletAddress(i) === address) return i;
  return undefined;
}

/** Options for `autoclaim sandbox`: n demo wallets with the demo profiles. */
export function demoSandboxOptions(n: number, accrualLamportsPerSec: Lamports = 833_333n): Partial<SandboxOptions> {
  return {
    wallets: Array.from({ length: n }, (_, i) => profileFor(demoWalletAddress(i), i, accrualLamportsPerSec)),
    defaultAccrualLamportsPerSec: accrualLamportsPerSec,
    rateLimit: PUBLISHED_RATE_LIMIT,
  };
}

/** The one folder demo keys are written to: `demo-keys` in the state file's folder. */
function demoKeyDir(config: Pick<AppConfig, 'state'>): string {
  return join(dirname(resolve(config.state.path)), 'demo-keys');
}

export function prepareDemoWorld(config: AppConfig, opts: { logger: Logger }): { apiKey: string; sandboxOptions: SandboxOptions } {
  const folder = demoKeyDir(config);
  for (const w of config.wallets) {
    if (!('file' in w.key) || existsSync(w.key.file)) continue;
    const index = demoWalletIndex(w.address);
    if (index === undefined) continue; // not a demo wallet: key loading will say the file is missing
    if (dirname(resolve(w.key.file)) !== folder) {
      // Key loading says the file is missing; this says why it was not made.
      opts.logger.warn(
        { event: 'sandbox.demo_key_skipped', wallet: w.name, file: w.key.file, folder },
        `not writing a demo key for ${w.name} at ${w.key.file}: demo keys are written only into ${folder}`,
      );
      continue;
    }
    const pair = demoWalletKeyPair(index);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    writeFileSync(w.key.file, JSON.stringify([...pair.secretKey]) + '\n', { mode: 0o600, flag: 'wx' });
    opts.logger.info({ event: 'sandbox.demo_key_written', wallet: w.name, file: w.key.file }, `wrote demo key for ${w.name} (sandbox only)`);
  }
  const accrual = config.sandbox.accrualLamportsPerSec;
  return {
    // A fresh random key per process: the demo exercises real bearer checks without a secret to manage.
    apiKey: randomBytes(24).toString('base64url'),
    sandboxOptions: {
      epochMs: config.sandbox.epochMs,
      wallets: config.wallets.map((w, i) => profileFor(w.address, i, accrual)),
      defaultAccrualLamportsPerSec: accrual,
      rateLimit: PUBLISHED_RATE_LIMIT,
    },
  };
}

function profileFor(address: string, position: number, accrual: Lamports): NonNullable<SandboxOptions['wallets']>[number] {
  const p = PROFILES[position % PROFILES.length] ?? { pending: 0n, accrualTimes10: 10n };
  return {
    address,
    pendingLamports: p.pending,
    lifetimeLamports: 0n,
    balanceLamports: 0n,
    accrualLamportsPerSec: (accrual * p.accrualTimes10) / 10n,
  };
}
