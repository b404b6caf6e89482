// Start-up, phase by phase, in a fresh process: module loading, the config pipeline, and loading
// every key (read, parse, derive the address, register with the redactor, compare). Prints JSON.
//   node startup-phases.mjs CONFIG
import { dirname, join } from 'node:path';

const t0 = performance.now();
const DIST = join(import.meta.dirname, '../../dist');
const { loadConfig } = await import(join(DIST, 'config/index.js'));
const { loadKey, checkAddress } = await import(join(DIST, 'keys/keys.js'));
const { Redactor } = await import(join(DIST, 'log/redact.js'));
// What `once` loads: the CLI shell, the command context and the run/once command's module graph.
await import(join(DIST, 'cli/program.js'));
await import(join(DIST, 'cli/context.js'));
await import(join(DIST, 'cli/commands/run.js'));
const t1 = performance.now();
const result = loadConfig(process.argv[2], { env: process.env, cwd: process.cwd() });
if (result.config === undefined) throw new Error(JSON.stringify(result.errors.slice(0, 3)));
const t2 = performance.now();
const signers = new Map();
const redactor = new Redactor();
for (const w of result.config.wallets) {
  // As `run` and `once` load them (src/config/key-check.ts): derivation deferred to the first signature.
  const signer = loadKey(w.key, { env: process.env, baseDir: dirname(result.config.file), redactor });
  checkAddress(signer, w.address, w.name);
  signers.set(w.address, signer);
}
const t3 = performance.now();
process.stdout.write(`${JSON.stringify({ wallets: signers.size, modulesMs: t1 - t0, configMs: t2 - t1, keysMs: t3 - t2 })}\n`);
