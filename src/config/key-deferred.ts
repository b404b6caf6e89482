// The wallet keys' check, deferred (issue 14): for `run` and `once` over a large fleet, the config
// pipeline hands the wallets' keys to a worker thread (api/key-thread.ts) instead of loading them
// one by one before the first poll. Polls need only addresses and the API key; nothing is decided
// to act on and nothing is signed until ready() has resolved (the daemon's gate). As results come
// in, the one Redactor learns each key's printed forms (as hashes, Redactor.addHashed) and the
// runtime's signer map is filled; a
// key that fails becomes the same ConfigIssue at the wallet's `key:` the synchronous path gives
// ("wallet NAME: …"), and ready() rejects with a ConfigError listing every one of them.
import type { ConfigIssue } from '../errors.js';
import { ConfigError } from '../errors.js';
import type { Redactor } from '../log/redact.js';
import { sourcedSigner } from '../api/keys.js';
import type { Signer } from '../api/signer.js';
import type { KeyThread } from '../api/key-thread.js';
import type { KeyBatch, KeyJob, KeyJobContext } from '../api/key-worker.js';
import { IssueList, type ConfigSource } from './positions.js';

/** How `run` and `once` ask for the deferred check (KeyCheckOptions.defer). */
export interface DeferKeysOptions {
  /**
   * Only a fleet of at least this many wallets: a worker is another V8 isolate (~5–10 MB) and pays
   * off only when the keys take long enough to load.
   */
  fromWallets: number;
  /** Monotonic milliseconds, for how long the check took. */
  now: () => number;
  /** The worker's script, when not key-worker.js beside the code (tests running from src/). */
  workerUrl?: URL | undefined;
}

/** A finished check, for the `keys.checked` log line. */
export interface KeyCheckDone {
  wallets: number;
  ms: number;
  /** 'main' when no worker could be had and the main thread did the work between polls. */
  thread: KeyThread;
}

export class DeferredKeyCheck {
  readonly wallets: number;
  private readonly done: Promise<KeyCheckDone>;
  private outcome: 'pending' | 'passed' | 'failed' = 'pending';

  constructor(
    jobs: KeyJob[],
    ctx: KeyJobContext,
    private readonly deps: { redactor: Redactor; signers: Map<string, Signer>; source: ConfigSource; defer: DeferKeysOptions },
  ) {
    this.wallets = jobs.length;
    this.done = this.run(jobs, ctx).then(
      (done) => {
        this.outcome = 'passed';
        return done;
      },
      (err: unknown) => {
        this.outcome = 'failed';
        throw err;
      },
    );
    // Awaited by whoever needs it; a failure nobody has asked about yet is not an unhandled rejection.
    this.done.catch(() => {});
  }

  /** Resolves once every key has passed; rejects with a ConfigError listing each that did not. */
  ready(): Promise<KeyCheckDone> {
    return this.done;
  }

  /** Whether the check is over, and how it ended. */
  get state(): 'pending' | 'passed' | 'failed' {
    return this.outcome;
  }

  private async run(jobs: KeyJob[], ctx: KeyJobContext): Promise<KeyCheckDone> {
    const { redactor, signers, source, defer } = this.deps;
    const started = defer.now();
    const names = new Map(jobs.map((j) => [j.index, j.name]));
    const failed: Array<{ index: number; message: string }> = [];
    const take = ({ results, hashed }: KeyBatch): void => {
      // Learned first, whatever the outcome: the synchronous path had registered them as it read.
      redactor.addHashed(hashed);
      for (const r of results) {
        if (r.ok) signers.set(r.address, sourcedSigner(r));
        else failed.push({ index: r.index, message: r.message });
      }
    };
    let thread: KeyThread;
    try {
      // Loaded only here: a small fleet's start (the synchronous check) never needs worker_threads.
      const { runKeyJobs } = await import('../api/key-thread.js');
      thread = await runKeyJobs(jobs, ctx, { workerUrl: defer.workerUrl, onBatch: take });
    } catch (err) {
      // A bug in a job reads as a config problem, as it would in the synchronous pipeline
      // (load.ts): its message is left out, since it could quote a value.
      const why = err instanceof Error ? err.name : 'unknown failure';
      throw new ConfigError([{ file: source.file, line: 0, col: 0, path: '', message: `the config could not be checked (${why})` }]);
    }
    if (failed.length > 0) {
      // Nothing may sign with a fleet that did not pass whole, as at a synchronous start.
      signers.clear();
      throw new ConfigError(placed(source, failed, names));
    }
    return { wallets: jobs.length, ms: defer.now() - started, thread };
  }
}

/** Each failure at its wallet's `key:`, named, in file order: the list the synchronous check makes. */
function placed(source: ConfigSource, failed: Array<{ index: number; message: string }>, names: Map<number, string>): ConfigIssue[] {
  const issues = new IssueList(source);
  for (const f of failed) issues.error(['wallets', f.index, 'key'], `wallet ${names.get(f.index) ?? ''}: ${f.message}`);
  return issues.sorted().errors;
}
