// The wallet keys' check off the main thread (issue 14): `run` and `once` over a large fleet read,
// parse and derive every key here, on a worker thread, while the main thread already polls. Each
// job is what the synchronous check (config/key-check.ts) does for one wallet — loadKeyObject, then
// the address comparison — run by the same code, so the messages and the refusals are the same.
// What the main thread gets back per wallet: the private KeyObject (node:crypto posts it between
// threads, checked on Node 20 and 22) and every string its Redactor must learn, recorded by
// passing parseKeyText a Redactor that only writes them down; or the KeyError's message.
//
// This file is both the worker's entry (dist/api/key-worker.js, started by key-thread.ts) and, for
// the main thread's fallback when no worker can be started, the job function itself.
import type { KeyObject } from 'node:crypto';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { KeySource } from '../domain.js';
import { KeyError } from '../errors.js';
import { Redactor } from '../log/redact.js';
import { checkAddress, loadKeyObject } from './keys.js';

/** One wallet's key to check. */
export interface KeyJob {
  /** The wallet's index in config.wallets: where its `key:` is, for the message. */
  index: number;
  name: string;
  address: string;
  source: KeySource;
  /** False when the configured address was itself refused: only the key is checked then. */
  matchAddress: boolean;
}

/** What every job of one check reads its keys with. */
export interface KeyJobContext {
  /** Only the variables the jobs' `env:` sources name: the worker gets no copy of the rest. */
  env: Record<string, string>;
  credentialsDir: string | undefined;
  baseDir: string;
}

export type KeyJobResult =
  | { index: number; ok: true; key: KeyObject; address: string; source: string; forms: string[] }
  | { index: number; ok: false; message: string; forms: string[] };

/**
 * A Redactor that only records what it is asked to learn: parseKeyText registers every printed form
 * of a key through add() (addBytes computes its encodings and calls add), so the forms come from
 * that one place, and the main thread's Redactor learns exactly what the synchronous path teaches it.
 */
class RecordingRedactor extends Redactor {
  forms: string[] = [];

  override add(secret: string | undefined): this {
    if (secret !== undefined) this.forms.push(secret);
    return this;
  }
}

/** One wallet's check. Anything but a KeyError is a bug and propagates. */
export function runKeyJob(job: KeyJob, ctx: KeyJobContext): KeyJobResult {
  const recorder = new RecordingRedactor();
  try {
    const loaded = loadKeyObject(job.source, { env: ctx.env, credentialsDir: ctx.credentialsDir, baseDir: ctx.baseDir, redactor: recorder });
    if (job.matchAddress) checkAddress(loaded, job.address, job.name);
    return { index: job.index, ok: true, ...loaded, forms: recorder.forms };
  } catch (err) {
    if (!(err instanceof KeyError)) throw err;
    // Forms recorded before the failure are kept: the synchronous path had registered them too.
    return { index: job.index, ok: false, message: err.message, forms: recorder.forms };
  }
}

/** What key-thread.ts starts the worker with. */
export interface KeyWorkerData {
  autoclaimKeyWorker: true;
  jobs: KeyJob[];
  ctx: KeyJobContext;
  batch: number;
}

/** worker → main: a batch of results, then `done`. */
export type KeyWorkerMessage = { results: KeyJobResult[] } | { done: true };

function isKeyWorkerData(data: unknown): data is KeyWorkerData {
  return typeof data === 'object' && data !== null && (data as { autoclaimKeyWorker?: unknown }).autoclaimKeyWorker === true;
}

// Started as a worker by key-thread.ts (and only then: imported on the main thread, nothing runs).
if (!isMainThread && parentPort !== null && isKeyWorkerData(workerData)) {
  const port = parentPort;
  const { jobs, ctx, batch } = workerData;
  for (let i = 0; i < jobs.length; i += batch) {
    const results = jobs.slice(i, i + batch).map((job) => runKeyJob(job, ctx));
    port.postMessage({ results } satisfies KeyWorkerMessage);
  }
  port.postMessage({ done: true } satisfies KeyWorkerMessage);
}
