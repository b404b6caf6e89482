// The wallet keys' check off the main thread (issue 14): `run` and `once` over a large fleet read,
// parse and derive every key here, on a worker thread, while the main thread already polls. Each
// job is what the synchronous check (config/key-check.ts) does for one wallet — loadKeyObject, then
// the address comparison — run by the same code, so the messages and the refusals are the same.
// What the main thread gets back per wallet: the private KeyObject (node:crypto posts it between
// threads, checked on Node 20 and 22), or the KeyError's message; and per batch, what its Redactor
// must learn: the batch's keys are registered, by the same code as ever (parseKeyText), with a
// Redactor of the worker's, whose hashes (Redactor.exportHashed: no key text) the main thread adds.
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

export type KeyJobResult = { index: number; ok: true; key: KeyObject; address: string; source: string } | { index: number; ok: false; message: string };

/** Some jobs' results, and the hashes of every form of their keys (a failed key's read part too). */
export interface KeyBatch {
  results: KeyJobResult[];
  hashed: Int32Array;
}

/** One wallet's check; its key's forms go to `redactor` as it is read. Anything but a KeyError is a bug and propagates. */
function runKeyJob(job: KeyJob, ctx: KeyJobContext, redactor: Redactor): KeyJobResult {
  try {
    const loaded = loadKeyObject(job.source, { env: ctx.env, credentialsDir: ctx.credentialsDir, baseDir: ctx.baseDir, redactor });
    if (job.matchAddress) checkAddress(loaded, job.address, job.name);
    return { index: job.index, ok: true, ...loaded };
  } catch (err) {
    if (!(err instanceof KeyError)) throw err;
    return { index: job.index, ok: false, message: err.message };
  }
}

/** A batch of jobs on a Redactor of its own, exported as hashes: the same on the worker and, as a fallback, on the main thread. */
export function runKeyBatch(jobs: KeyJob[], ctx: KeyJobContext): KeyBatch {
  const redactor = new Redactor();
  const results = jobs.map((job) => runKeyJob(job, ctx, redactor));
  return { results, hashed: redactor.exportHashed() };
}

/** What key-thread.ts starts the worker with. */
export interface KeyWorkerData {
  autoclaimKeyWorker: true;
  jobs: KeyJob[];
  ctx: KeyJobContext;
  batch: number;
}

/** worker → main: batches, then `done`. */
export type KeyWorkerMessage = { batch: KeyBatch } | { done: true };

function isKeyWorkerData(data: unknown): data is KeyWorkerData {
  return typeof data === 'object' && data !== null && (data as { autoclaimKeyWorker?: unknown }).autoclaimKeyWorker === true;
}

// Started as a worker by key-thread.ts (and only then: imported on the main thread, nothing runs).
if (!isMainThread && parentPort !== null && isKeyWorkerData(workerData)) {
  const port = parentPort;
  const { jobs, ctx, batch } = workerData;
  for (let i = 0; i < jobs.length; i += batch) {
    const done = runKeyBatch(jobs.slice(i, i + batch), ctx);
    port.postMessage({ batch: done } satisfies KeyWorkerMessage, [done.hashed.buffer as ArrayBuffer]);
  }
  port.postMessage({ done: true } satisfies KeyWorkerMessage);
}
