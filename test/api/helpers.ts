// Shared pieces for the API tests: a clock and sleep that only move when the test says so, a
// resolved ApiConfig, and a logger whose lines are captured as parsed JSON.
import { Writable } from 'node:stream';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import type { ApiConfig, Clock } from '../../src/domain.js';
import { ApiError } from '../../src/errors.js';
import { createLogger, type Logger } from '../../src/log/logger.js';
import { Redactor } from '../../src/log/redact.js';

export class FakeTime implements Clock {
  wall = Date.UTC(2025, 5, 1, 12, 0, 0);
  mono = 1_000;
  private timers: Array<{ at: number; seq: number; resolve: () => void }> = [];
  private seq = 0;
  readonly sleeps: number[] = [];

  now = (): number => this.wall;
  monotonic = (): number => this.mono;

  sleep = (ms: number): Promise<void> => {
    this.sleeps.push(ms);
    return new Promise<void>((resolve) => {
      this.timers.push({ at: this.mono + ms, seq: this.seq++, resolve });
    });
  };

  /** A sleep that returns at once, moving the clocks by the time slept (for code that just waits). */
  autoSleep = (ms: number): Promise<void> => {
    this.sleeps.push(ms);
    this.mono += ms;
    this.wall += ms;
    return Promise.resolve();
  };

  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves both clocks forward, firing due sleeps in order and letting their continuations run. */
  async advance(ms: number): Promise<void> {
    const target = this.mono + ms;
    await flush();
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers[0];
      if (next === undefined || next.at > target) break;
      this.timers.shift();
      this.wall += next.at - this.mono;
      this.mono = Math.max(this.mono, next.at);
      next.resolve();
      await flush();
    }
    this.wall += target - this.mono;
    this.mono = target;
    await flush();
  }
}

/** Lets pending promise continuations run (several rounds, since chains are a few hops deep). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await new Promise<void>((r) => setImmediate(r));
}

export function apiConfig(over: Partial<ApiConfig> = {}): ApiConfig {
  return {
    baseUrl: 'http://api.test/v1',
    headerPrefix: 'x-svc',
    timeoutMs: 2_000,
    connectTimeoutMs: 1_000,
    maxResponseBytes: 1 << 20,
    connections: 4,
    claimSettleMs: 0,
    rateLimit: { perMinute: 0, burst: 100 },
    endpoints: { ...DEFAULT_ENDPOINTS },
    signatureEncoding: 'base58',
    apiKeyFile: undefined,
    authReads: true,
    readAttempts: 3,
    ...over,
  };
}

export interface CapturedLog {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
  text: () => string;
  redactor: Redactor;
}

export function captureLogger(level = 'debug', redactor = new Redactor()): CapturedLog {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      raw.push(chunk.toString());
      cb();
    },
  });
  const logger = createLogger({ level, redactor, destination: stream, pretty: false });
  return {
    logger,
    redactor,
    get lines() {
      return raw
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    text: () => raw.join(''),
  };
}

/** The ApiError a promise rejects with; fails the test if it resolves or rejects otherwise. */
export async function apiError(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}
