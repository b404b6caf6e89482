// Shared by the end-to-end tests: temp dirs, real keys, a config file, the CLI run in-process
// (captured streams, a controllable clock) or as a real child process (signals, SIGKILL).
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { writeKeyFile } from '../../src/keys/keys.js';
import { generateKeypair } from '../../src/keys/signer.js';
import { main } from '../../src/cli/program.js';
import type { Clock } from '../../src/domain.js';
import { systemClock } from '../../src/domain.js';

export const REPO = resolve(import.meta.dirname, '../..');
export const CLI = join(REPO, 'dist/cli/main.js');

/** A canary API key: if it shows up in any output or file, redaction failed. */
export const CANARY_API_KEY = 'canary-apikey-7Qk2ZxW9pLmN4vR8sT1u';

/**
 * An `epochOrigin` for startSandbox that puts its day-long epoch's turn 12 h from now, never inside
 * a test. By default the sandbox's epochs turn at midnight UTC by the real clock, and a test that
 * counts claims over two runs of `once` (once_per_epoch holding in between) saw a new epoch, and a
 * claim more or fewer, when CI ran it at 23:59. The epoch's date (the origin's UTC date, today or
 * yesterday) stays within the day of this machine's date that the daemon's epoch check believes.
 */
export function epochTurningFarAway(now: number = Date.now()): number {
  return now - 12 * 3_600_000;
}

export function tempDir(prefix = 'autoclaim-e2e-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface TestWallet {
  name: string;
  address: string;
  keyFile: string;
  secretKey64: Uint8Array;
}

export function makeWallets(dir: string, names: string[]): TestWallet[] {
  mkdirSync(join(dir, 'keys'), { recursive: true, mode: 0o700 });
  return names.map((name) => {
    const { secretKey64, address } = generateKeypair();
    const keyFile = join(dir, 'keys', `${name}.json`);
    writeKeyFile(keyFile, secretKey64);
    return { name, address, keyFile, secretKey64 };
  });
}

export interface ConfigParts {
  baseUrl: string;
  wallets: TestWallet[];
  /** YAML of the `rules:` list items, indented by two spaces. */
  rules?: string;
  /** Extra top-level YAML appended at the end. */
  extra?: string;
  maxSolPerAction?: string;
  apiExtra?: string;
}

export const COMPOUND_RULE = `  - name: compound
    when:
      pending_sol: { gte: 0.5 }
    do:
      - claim
      - deposit: { symbol: SOL2X, amount: "50%" }
`;

export function configYaml(p: ConfigParts): string {
  const wallets = p.wallets
    .map((w) => `  - name: ${w.name}\n    address: ${w.address}\n    key: { file: ./keys/${w.name}.json }\n`)
    .join('');
  return `api:
  base_url: ${p.baseUrl}
  timeout_ms: 2000
  connect_timeout_ms: 1000
  read_attempts: 2
  rate_limit: { per_minute: 60000, burst: 1000 }
${p.apiExtra ?? ''}state:
  path: ./state/autoclaim.db
schedule:
  poll: "*/1 * * * * *"
  jitter: 0s
wallets:
${wallets}rules:
${p.rules ?? COMPOUND_RULE}safety:
  max_sol_per_action: ${p.maxSolPerAction ?? '100'}
${p.extra ?? ''}`;
}

export function writeConfig(dir: string, p: ConfigParts): string {
  const file = join(dir, 'autoclaim.yaml');
  writeFileSync(file, configYaml(p));
  return file;
}

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.text += chunk.toString();
    cb();
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout lines that parse as JSON log events. */
  events: Array<Record<string, unknown>>;
}

export function parseEvents(text: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  }
  return out;
}

/** Runs the CLI in this process with captured output. */
export async function runCli(argv: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; clock?: Clock }): Promise<CliResult> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(argv, {
    env: { AUTOCLAIM_API_KEY: CANARY_API_KEY, ...opts.env },
    cwd: opts.cwd,
    stdout,
    stderr,
    clock: opts.clock ?? systemClock,
    signals: new EventEmitter(),
  });
  return { code, stdout: stdout.text, stderr: stderr.text, events: parseEvents(stdout.text) };
}

export interface Child {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  events: () => Array<Record<string, unknown>>;
  /** Resolves when a log event matching the predicate has been printed. */
  waitFor: (pred: (e: Record<string, unknown>, index: number) => boolean, timeoutMs?: number) => Promise<Record<string, unknown>>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (SIGKILL unless said) if it still runs, and resolves once it has exited: a test's clean-up. */
  stop: (signal?: NodeJS.Signals) => Promise<void>;
}

/** Runs the built CLI as a real process (for signals and crashes). */
/** `nodeArgs`: node's own arguments before the script (as a unit's ExecStart= has them). */
export function spawnCli(argv: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; nodeArgs?: string[] }): Child {
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), CLI, ...argv], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH, AUTOCLAIM_API_KEY: CANARY_API_KEY, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const bus = new EventEmitter();
  proc.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
    bus.emit('data');
  });
  proc.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    proc.on('exit', (code, signal) => {
      bus.emit('data');
      res({ code, signal });
    });
  });
  const waitFor = (pred: (e: Record<string, unknown>, index: number) => boolean, timeoutMs = 15_000) =>
    new Promise<Record<string, unknown>>((res, rej) => {
      const check = () => {
        const hit = parseEvents(out).find(pred);
        if (hit) {
          cleanup();
          res(hit);
        } else if (proc.exitCode !== null || proc.signalCode !== null) {
          cleanup();
          rej(new Error(`process exited before the awaited event\nstdout:\n${out}\nstderr:\n${err}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        rej(new Error(`timed out waiting for an event\nstdout:\n${out.slice(-4000)}\nstderr:\n${err}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        bus.off('data', check);
      };
      bus.on('data', check);
      check();
    });
  const stop = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
  };
  return { proc, stdout: () => out, stderr: () => err, events: () => parseEvents(out), waitFor, exited, stop };
}
