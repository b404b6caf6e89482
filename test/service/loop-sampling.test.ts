import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMetrics } from '../../src/service/metrics.js';
import { LOOP_SAMPLE_MS } from '../../src/service/loop-lag.js';

// prom-client reads node:perf_hooks through require(): the same object as here.
const perfHooks = createRequire(import.meta.url)('node:perf_hooks') as typeof import('node:perf_hooks');

describe('the event loop lag metrics', () => {
  afterEach(() => vi.restoreAllMocks());

  it('sample the loop as /healthz does, not a hundred times a second', () => {
    const monitor = vi.spyOn(perfHooks, 'monitorEventLoopDelay');
    createMetrics();
    // Each sample wakes the process: at prom-client's default (10 ms) that was most of what an
    // idle daemon spent (bench/RESULTS.md, "What a daemon spends whatever it polls").
    expect(monitor.mock.calls.map(([o]) => o?.resolution)).toEqual([LOOP_SAMPLE_MS]);
    expect(LOOP_SAMPLE_MS).toBeGreaterThanOrEqual(100);
  });
});
