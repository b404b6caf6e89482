// The signer journal's WAL checkpoints, off the signing path. SQLite's default checkpoints the WAL
// into the database file inside the commit that takes it past 1,000 pages: one signing commit in
// ~200 also wrote those pages to the database file and fsynced it, the slowest commits of all (the
// tail of the signer's latency). Here a worker thread with a connection of its own runs a PASSIVE
// checkpoint every CHECKPOINT_EVERY_MS, beside the signing connection, never blocking its event loop.
//
// Why it is safe: a checkpoint decides no durability. A signature's record is on disk when its
// commit's WAL fsync returns (synchronous=FULL), before the answer, wherever checkpoints run; a
// checkpoint copies committed frames into the database file and fsyncs it, and SQLite restarts the
// WAL only after every frame is in the database file — from any connection alike. PASSIVE never
// waits for a lock and never makes the writer wait (it takes no write lock).
// Why the WAL stays bounded: between two checkpoints it grows by what is signed in
// CHECKPOINT_EVERY_MS (and is then reused from its start, not grown: journal_size_limit only cuts a
// WAL that a backlog grew past it) — as long as a checkpoint can finish between two commits. A checkpoint that cannot keep up (writes without a pause, a
// stalled disk) or a worker that died leaves it to the signing connection's own automatic
// checkpoint, set to WAL_BACKSTOP_PAGES: a rare slow commit rather than an unbounded file.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log/logger.js';

export const CHECKPOINT_EVERY_MS = 250;
/**
 * The signing connection checkpoints itself past this many WAL pages (16 MiB of 4 KiB pages): with
 * signatures back to back (~5 pages each) once in ~800 rather than SQLite's once in ~200, while the
 * WAL grows (each commit also extending the file) only for its first ~800 after a start.
 */
export const WAL_BACKSTOP_PAGES = 4096;
/** Checkpoints run back to back while commits keep coming in during the last one. */
const CATCH_UP = 3;
/** A WAL grown past this (a backlog) is cut back to it when it restarts. */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

// CommonJS (an eval worker): the code runs from a string, so tests on the TypeScript sources and
// dist/ run the same worker, with no file of its own to find.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 0, fileMustExist: true });
db.pragma('synchronous = FULL');
let failed = false;
const timer = setInterval(() => {
  try {
    // The WAL restarts from its start (reused, not grown) only at a write that finds every frame
    // checkpointed: frames committed while a checkpoint ran are taken at once, a few times, until
    // one finds nothing new.
    let log = -1;
    for (let i = 0; i < workerData.catchUp; i++) {
      const [r] = db.pragma('wal_checkpoint(PASSIVE)');
      if (!r || r.log === log) break;
      log = r.log;
    }
    failed = false;
  } catch (err) {
    // Once per run of failures: a disk that fails keeps failing every 250 ms.
    if (!failed) parentPort.postMessage({ failed: String(err && err.message || err) });
    failed = true;
  }
}, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  process.exit(0);
});
`;

export interface Checkpointer {
  /** Stops the worker (its connection closed) before the journal's own closes. */
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, logger: Logger, everyMs = CHECKPOINT_EVERY_MS): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { path, driver, everyMs, catchUp: CATCH_UP } });
  // Never what keeps the signer alive.
  worker.unref();
  let exited = false;
  const done = new Promise<void>((resolve) => {
    worker.on('exit', () => {
      exited = true;
      resolve();
    });
  });
  worker.on('message', (m: { failed?: string }) => {
    if (m.failed !== undefined) logger.warn({ event: 'signer.checkpoint_failed', why: m.failed }, `the signer journal's background checkpoint failed (${m.failed}); the signing connection checkpoints past ${WAL_BACKSTOP_PAGES} WAL pages itself`);
  });
  worker.on('error', (err) => logger.warn({ event: 'signer.checkpoint_failed', err }, `the signer journal's checkpoint worker stopped; the signing connection checkpoints past ${WAL_BACKSTOP_PAGES} WAL pages itself`));
  return {
    stop: async () => {
      if (exited) return;
      worker.postMessage('stop');
      // The worker ends once its connection is closed (no timer left); a stuck one is ended.
      const killer = setTimeout(() => void worker.terminate(), 5_000);
      await done;
      clearTimeout(killer);
    },
  };
}
