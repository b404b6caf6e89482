// Readiness in a cluster (issue 15): a daemon holding leases is checked as alone; one holding none
// while others are live is standby — 503, `standby: true`, a reason naming it, and no poll check
// (it polls nothing) — and one alone holding nothing is not ready, for a reason that is a fault.
// The db and signing checks apply in every case.
import { describe, expect, it } from 'vitest';
import { evaluateReadiness } from '../../src/service/readiness.js';
import { HOUR, MINUTE, T0, healthy } from './health-report.js';

/** What a daemon holding nothing knows of its wallets' polls: nothing (its fleet scope is empty). */
const idle = { lastSuccessAt: undefined };
const dbDown = { dbError: 'connection terminated' };
const paused = { signing: { all: { reason: 'HTTP 401', since: T0 }, wallets: new Map() } };

describe('evaluateReadiness in a cluster', () => {
  it.each([
    // name, report, ready, standby, reasons (by check, in order)
    ['holding leases, polls recent', { cluster: { held: 5, live: 2 } }, true, false, []],
    ['holding leases alone', { cluster: { held: 10, live: 1 } }, true, false, []],
    ['holding leases whose polls are late: the poll check applies', { cluster: { held: 5, live: 2 }, lastSuccessAt: T0 - HOUR }, false, false, ['poll']],
    ['standby: none held, one other live', { cluster: { held: 0, live: 2 }, ...idle }, false, true, ['cluster']],
    ['standby long after the start: no poll check', { cluster: { held: 0, live: 3 }, ...idle, startedAt: T0 - 24 * HOUR }, false, true, ['cluster']],
    ['standby with the database down: db still applies', { cluster: { held: 0, live: 2 }, ...idle, ...dbDown }, false, true, ['cluster', 'db']],
    ['standby with signing paused: signing still applies', { cluster: { held: 0, live: 2 }, ...idle, ...paused }, false, true, ['cluster', 'signing']],
    ['alone holding nothing, just started', { cluster: { held: 0, live: 1 }, ...idle, startedAt: T0 - MINUTE }, false, false, ['cluster']],
    ['alone holding nothing for long: the poll check applies too', { cluster: { held: 0, live: 1 }, ...idle }, false, false, ['cluster', 'poll']],
    ['holding leases with the database down', { cluster: { held: 3, live: 2 }, ...dbDown }, false, false, ['db']],
    ['no cluster (SQLite): as before', {}, true, false, []],
    // issue 25: live daemons on another config leave the shared wallets to neither: a fault, never standby.
    ['holding leases, config differs from another live daemon', { cluster: { held: 2, live: 2, conflict: { others: ['b'], contested: 3 } } }, false, false, ['cluster']],
    ['holding none, config differs: not standby', { cluster: { held: 0, live: 2, conflict: { others: ['b'], contested: 4 } }, ...idle }, false, false, ['cluster', 'poll']],
    // Upgrades review (helper 31): stepped aside for a newer shared schema: a fault until restarted on the newer release, never standby.
    ['stepped aside for a newer schema: not standby', { cluster: { held: 0, live: 2, schemaNewer: { reason: 'schema 6 > 5' } }, ...idle, ...paused }, false, false, ['cluster', 'poll', 'signing']],
  ] as const)('%s', (_name, change, ready, standby, reasons) => {
    const r = evaluateReadiness({ ...healthy, ...change });
    expect(r.ready).toBe(ready);
    expect(r.standby).toBe(standby);
    expect(r.reasons.map((x) => x.slice(0, x.indexOf(':')))).toEqual(reasons);
  });

  it('says standby in its reason and its check, and that it is not an error', () => {
    const r = evaluateReadiness({ ...healthy, ...idle, cluster: { held: 0, live: 3 } });
    expect(r.reasons[0]).toMatch(/^cluster: standby: holds no lease while 2 other daemon\(s\) are live .*\(not an error\)$/);
    expect(r.checks.cluster).toMatchObject({ ok: false, held: 0, live: 3 });
    expect(r.checks.poll).toMatchObject({ ok: true, detail: 'not applicable: standby, no wallet to poll' });
  });

  it('says why a daemon alone holding nothing is a fault', () => {
    const r = evaluateReadiness({ ...healthy, ...idle, startedAt: T0 - MINUTE, cluster: { held: 0, live: 1 } });
    expect(r.reasons).toEqual([expect.stringMatching(/^cluster: holds no lease and no other daemon is live, so no wallet is being worked/)]);
  });

  it('reports the leases of a working daemon, and has no cluster check without shared state', () => {
    expect(evaluateReadiness({ ...healthy, cluster: { held: 4, live: 2 } }).checks.cluster).toEqual({ ok: true, detail: 'holds 4 lease(s); 2 daemon(s) live', held: 4, live: 2 });
    expect(evaluateReadiness(healthy).checks).not.toHaveProperty('cluster');
  });
});
