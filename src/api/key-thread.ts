// The main thread's side of the deferred key check (issue 14): starts key-worker.js on a worker
// thread with every job, and hands each batch of results to `onBatch` as it arrives. A worker
// that cannot be started, or dies before it has answered every job, leaves the rest to the main
// thread, a batch at a time between polls: slower, never a different answer.
import { Worker } from 'node:worker_threads';
import { runKeyBatch, type KeyBatch, type KeyJob, type KeyJobContext, type KeyWorkerData, type KeyWorkerMessage } from './key-worker.js';

/** Results a message: few enough that the main thread registers them between polls. */
const BATCH = 250;

export interface KeyThreadOptions {
  /** The worker's script; key-worker.js beside this file by default (a test may point at dist/). */
  workerUrl?: URL | undefined;
  onBatch(batch: KeyBatch): void;
}

/** Where the jobs were run: 'main' when no worker could be had (or one died). */
export type KeyThread = 'worker' | 'main';

/** Runs every job; resolves once each has been handed to onBatch. Rejects only for a bug in a job. */
export async function runKeyJobs(jobs: KeyJob[], ctx: KeyJobContext, opts: KeyThreadOptions): Promise<KeyThread> {
  const answered = new Set<number>();
  const take = (batch: KeyBatch): void => {
    for (const r of batch.results) answered.add(r.index);
    opts.onBatch(batch);
  };
  const finished = await onWorker(jobs, ctx, opts.workerUrl ?? new URL('./key-worker.js', import.meta.url), take);
  if (finished) return 'worker';
  const rest = jobs.filter((j) => !answered.has(j.index));
  for (let i = 0; i < rest.length; i += BATCH) {
    // Yield between batches: the polls already under way go on.
    await new Promise<void>((resolve) => setImmediate(resolve));
    take(runKeyBatch(rest.slice(i, i + BATCH), ctx));
  }
  return 'main';
}

/** True when the worker answered every job; false when it could not start or stopped short. */
function onWorker(jobs: KeyJob[], ctx: KeyJobContext, url: URL, take: (batch: KeyBatch) => void): Promise<boolean> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      const workerData: KeyWorkerData = { autoclaimKeyWorker: true, jobs, ctx, batch: BATCH };
      // env: {} — the worker reads only what it is handed; it gets no copy of the process's secrets.
      worker = new Worker(url, { workerData, env: {}, stdout: true, stderr: true });
    } catch {
      resolve(false);
      return;
    }
    let done = false;
    let exited = false;
    worker.on('message', (m: KeyWorkerMessage) => {
      if (exited) return; // past the exit, the rest is the main thread's: nothing is taken twice
      if ('batch' in m) take(m.batch);
      else done = true;
    });
    // A script that is missing or fails to load, or a worker out of memory: 'error', then 'exit'.
    worker.on('error', () => {});
    worker.on('exit', () => {
      exited = true;
      resolve(done);
    });
    // Not unref'd: a process whose only work left is awaiting the check (a `once` whose polls are
    // done) must wait for it rather than exit with the check unsaid. The worker ends by itself.
  });
}
