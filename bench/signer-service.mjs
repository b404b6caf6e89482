// An `autoclaim signer` process (SPEC §7) for the benchmarks. bench/signers.mjs measures it beside
// the other backends, from the daemon's side, as the executor pays it; for the service alone:
//   npm run build && node bench/signers.mjs --backends=file,signer [--wallets=32] [--journal-dir=/dev/shm]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST } from './lib/common.mjs';

const { generateKeypair } = await import(join(DIST, 'keys/signer.js'));
const { writeKeyFile } = await import(join(DIST, 'keys/keys.js'));

/**
 * An `autoclaim signer` process on a socket in a temp dir, holding `wallets` keys (`bench`, then
 * `bench1`, `bench2`, …: one per wallet, as a daemon's wallets each name theirs) whose policy allows
 * SOL2X deposits far beyond what a benchmark signs; `stop` ends it and removes its files.
 */
export async function startSignerService({ journalDir = undefined, nodeArgs = [], wallets = 1, logLevel = 'info' } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'autoclaim-signer-bench-'));
  const journal = journalDir === undefined ? './journal.db' : join(mkdtempSync(join(journalDir, 'autoclaim-signer-bench-')), 'journal.db');
  const keys = Array.from({ length: wallets }, (_, i) => {
    const { secretKey64, address } = generateKeypair();
    writeKeyFile(join(dir, `k${i}.json`), secretKey64);
    return { key: i === 0 ? 'bench' : `bench${i}`, address, secretKey64, file: `./k${i}.json` };
  });
  const socket = join(dir, 'signer.sock');
  const policy = '    policy:\n      ops: [deposit]\n      symbols: [SOL2X]\n      max_sol_per_action: 1000\n      max_sol_per_day: 1000000000\n';
  writeFileSync(
    join(dir, 'signer.yaml'),
    `socket: ${socket}\nstate: { path: ${journal} }\nkeys:\n${keys.map((k) => `  - name: ${k.key}\n    address: ${k.address}\n    key: { file: ${k.file} }\n${policy}`).join('')}`,
  );
  const child = spawn(process.execPath, [...nodeArgs, join(DIST, 'cli/main.js'), 'signer', '--config', join(dir, 'signer.yaml'), '--log-level', logLevel], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 300 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 50));
  return {
    socket,
    pid: child.pid,
    keys,
    address: keys[0].address,
    secretKey64: keys[0].secretKey64,
    key: 'bench',
    stop: async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
      if (journalDir !== undefined) rmSync(join(journal, '..'), { recursive: true, force: true });
    },
  };
}
