// A daemon's first lease round at start can fail like any other: a query that times out behind a
// row lock a paused daemon holds, a busy database. For `run` that must not end the process (it
// exited 1 in the failover test when a replacement daemon started next to a paused one); the
// round is logged and tried again on the manager's timer. `once` has no next round and says so.
import { describe, expect, it } from 'vitest';
import type { Cluster } from '../../src/cluster/open.js';
import { ClusterWork } from '../../src/cluster/work.js';
import { systemClock } from '../../src/domain.js';
import { captureLog } from '../support/log.js';

function fakeCluster(firstTick: 'fails' | 'works') {
  const calls: string[] = [];
  let ticks = 0;
  const manager = {
    on: () => undefined,
    register: () => Promise.resolve(void calls.push('register')),
    tick: () => {
      calls.push('tick');
      ticks += 1;
      return firstTick === 'fails' && ticks === 1 ? Promise.reject(new Error('Query read timeout')) : Promise.resolve();
    },
    settled: () => Promise.resolve(void calls.push('settled')),
    start: () => void calls.push('start'),
  };
  const cluster = { manager, setAddresses: () => undefined } as unknown as Cluster;
  return { cluster, calls };
}

describe('joining the cluster', () => {
  it('run: a first round that fails is logged, and the manager goes on ticking', async () => {
    const log = captureLog('debug');
    const { cluster, calls } = fakeCluster('fails');
    const work = new ClusterWork(cluster, { store: { recoverInFlight: () => [] }, clock: systemClock, logger: log.logger });
    await expect(work.join(true)).resolves.toBeUndefined();
    expect(calls).toEqual(['register', 'tick', 'settled', 'start']);
    expect(log.lines.filter((l) => l.event === 'lease.tick_failed')).toHaveLength(1);
  });

  it('once: a first round that fails fails the command, and nothing ticks on', async () => {
    const log = captureLog('debug');
    const { cluster, calls } = fakeCluster('fails');
    const work = new ClusterWork(cluster, { store: { recoverInFlight: () => [] }, clock: systemClock, logger: log.logger });
    await expect(work.join(false)).rejects.toThrow('Query read timeout');
    expect(calls).toEqual(['register', 'tick']);
  });

  it('a first round that works: no warning, and the manager ticks on for run only', async () => {
    for (const keepTicking of [true, false]) {
      const log = captureLog('debug');
      const { cluster, calls } = fakeCluster('works');
      await new ClusterWork(cluster, { store: { recoverInFlight: () => [] }, clock: systemClock, logger: log.logger }).join(keepTicking);
      expect(calls).toEqual(keepTicking ? ['register', 'tick', 'settled', 'start'] : ['register', 'tick', 'settled']);
      expect(log.lines.filter((l) => l.event === 'lease.tick_failed')).toEqual([]);
    }
  });
});
