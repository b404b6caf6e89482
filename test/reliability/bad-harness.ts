// The real poll path for malformed answers, built once and reused by thousands of cases: the real
// ApiClient and undici Agent over loopback → runWalletCycle with a real PlanExecutor and a real
// SQLite store in a temp dir. A tiny server answers every read with whatever body the current case
// set; every request is counted, and so is every signature made.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { createDispatcher, type ApiClient } from '../../src/api/client.js';
import { generateKeypair } from '../../src/keys/signer.js';
import { systemClock, type ApiConfig, type Rule, type WalletConfig } from '../../src/domain.js';
import { createLogger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';
import type { SyncStore } from '../../src/store/index.js';
import type { Signer } from '../../src/keys/signer.js';
import { inProcessSigner } from '../../src/keys/backends/in-process.js';
import type { WalletCycleResult } from '../../src/executor/wallet-cycle.js';
import { openCycleRig } from '../support/cycle-rig.js';
import { apiConfig } from '../api/helpers.js';

// readAttempts stays above one (apiConfig's 3): a bad answer must still be read once, not retried.
export const API_CONFIG: ApiConfig = apiConfig({
  baseUrl: 'http://127.0.0.1:1/v1', // replaced by the loopback server's address
  connections: 1,
});

/** Fires on any summary with something to claim, every time (no once-per-epoch): a slip shows. */
const GREEDY_RULE: Rule = {
  name: 'greedy',
  id: 'greedy',
  when: [{ field: 'pending_sol', op: 'gte', value: 1n }],
  do: [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'percent', ppm: 500_000 } }],
  limits: { oncePerEpoch: false, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
};

export interface BadHarness {
  wallet: WalletConfig;
  store: SyncStore;
  client: ApiClient;
  /** Log lines of the current case. */
  lines: Array<Record<string, unknown>>;
  counts: { gets: number; posts: number; signs: number };
  /** Sets the body the next reads get, clears the per-case log and counters. */
  answer(body: string): void;
  cycle(): Promise<WalletCycleResult>;
  close(): Promise<void>;
}

export async function openBadHarness(): Promise<BadHarness> {
  // On tmpfs when there is one: synchronous=FULL's fsync per poll is not what is under test here,
  // and 10,000 of them on a disk would eat the suite's time budget.
  const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'autoclaim-bad-'));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  const { secretKey64, address } = generateKeypair();
  const wallet: WalletConfig = { name: 'w', address, key: { env: 'UNUSED' }, rules: ['greedy'] };
  const counts = { gets: 0, posts: 0, signs: 0 };
  const signer: Signer = {
    address,
    sign: (m) => {
      counts.signs += 1;
      return nacl.sign.detached(m, secretKey64);
    },
  };

  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'info', redactor: new Redactor(), pretty: false, destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } });

  // A tiny loopback server answers every GET with the current case's body and every signed request
  // with a plain acknowledgement (so a slip would run its course and show in the counts).
  let body = '';
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const text = req.method === 'GET' ? body : '{"status":"ok"}';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const config: ApiConfig = { ...API_CONFIG, baseUrl: `http://127.0.0.1:${port}/v1` };
  const agent = createDispatcher(config);
  const dispatcher = agent.compose((dispatch) => (opts, handler) => {
    if (opts.method === 'GET') counts.gets += 1;
    else counts.posts += 1;
    return dispatch(opts, handler);
  });

  // This file's subject is the shape of an answer; its valid summaries carry any date from 2020
  // to 2035. The calendar (SPEC §2: a day from ours, never backward) has its own tests
  // (test/executor/epoch-check.test.ts, the hostile suite), so only the real-date check runs here.
  const rig = openCycleRig({
    storePath: join(dir, 'state.db'),
    clock: systemClock,
    logger,
    api: config,
    dispatcher,
    sleep: () => Promise.resolve(),
    signers: new Map([[wallet.address, inProcessSigner(signer)]]),
    settings: () => ({ rules: [GREEDY_RULE], safety: { maxLamportsPerAction: 10n ** 18n } }),
    epochsExempt: () => true,
  });

  return {
    wallet,
    store: rig.store,
    client: rig.client,
    lines,
    counts,
    answer: (text) => {
      body = text;
      lines.length = 0;
      counts.gets = counts.posts = counts.signs = 0;
    },
    cycle: () => rig.cycle(wallet),
    close: async () => {
      await rig.close();
      await agent.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      cleanup();
    },
  };
}

/** The field an issue names: "breakdown[0].vault: expected ..." → "breakdown[0].vault". */
export function issuePath(issue: string): string {
  const i = issue.indexOf(': ');
  return i < 0 ? issue : issue.slice(0, i);
}

/** True when `path` is `field` or inside it ("breakdown[2].vault" is inside "breakdown"). */
export function within(path: string, field: string): boolean {
  return path === field || path.startsWith(`${field}[`) || path.startsWith(`${field}.`);
}
