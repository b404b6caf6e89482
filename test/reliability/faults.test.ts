// Issue 4, faults on the wire: every fault × claim, deposit and mint, run through the real worker
// (real ApiClient, PlanExecutor, SQLite store) against the real sandbox. The table below is the
// contract of SPEC §2 and doubles as docs/reliability.md:
// - never reached the server (refused, DNS, connect timeout) or refused before applying (429):
//   the step goes back to `planned`, nothing is applied, and the next `once` signs it afresh;
// - may have been applied (reset, 5xx, timeout, cut or unreadable answer): the step is `unknown`.
//   A claim is reconciled from the summary at once (applied → acknowledged; not applied → sent again
//   as a new signed request). A deposit or mint stays `unknown` and is never sent again.
import { afterEach, describe, expect, it } from 'vitest';
import type { SignedOp, StepState } from '../../src/domain.js';
import type { FaultSpec } from '../../src/sandbox/server.js';
import { openFaultWorld, runOnce, RULES, type FaultWorld, type OnceResult, type WireFault } from './faults-harness.js';

type Fault =
  | { wire: WireFault }
  | { sandbox: FaultSpec };

const FAULTS: Record<string, Fault> = {
  'connection refused': { wire: 'refused' },
  'DNS failure': { wire: 'dns' },
  'connect timeout': { wire: 'connect_timeout' },
  'reset before applying': { sandbox: { kind: 'reset_before' } },
  '503 before applying': { sandbox: { kind: 'status5xx_before' } },
  '429 with Retry-After: 1': { sandbox: { kind: 'rate_limit', retryAfterSec: 1 } },
  '429 without Retry-After': { sandbox: { kind: 'rate_limit' } },
  'applied, then connection dropped': { sandbox: { kind: 'apply_then_drop' } },
  'applied, then 500': { sandbox: { kind: 'apply_then_5xx' } },
  'applied, then no answer until timeout': { sandbox: { kind: 'apply_then_hang' } },
  'applied, slow body (beyond the body timeout)': { sandbox: { kind: 'slow_body', ms: 8_000 } },
  'applied, truncated body': { sandbox: { kind: 'truncated_body' } },
  'applied, malformed 2xx body': { sandbox: { kind: 'malformed', body: '{"status": 7, "tx": ' } },
};

/** A step's state and the server-side applications of its op, after a `once`. */
interface After {
  state: StepState;
  applied: 0 | 1;
  /** Signed requests recorded for the step (each freshly signed). */
  sends: number;
}

type Row = [fault: string, op: keyof typeof RULES, first: After, second: After];

// What a step looks like after a `once`: its state, the server-side applications of its op, and
// how many signed requests were recorded for it.
const deferred: After = { state: 'planned', applied: 0, sends: 1 }; // back to planned, nothing applied
const reSent: After = { state: 'acknowledged', applied: 1, sends: 2 }; // then signed afresh and sent again
const reconciledApplied: After = { state: 'acknowledged', applied: 1, sends: 1 }; // unknown → summary: applied
const notAppliedReSent: After = { state: 'acknowledged', applied: 1, sends: 2 }; // unknown → summary: not applied → new request
const unknownNotApplied: After = { state: 'unknown', applied: 0, sends: 1 }; // never re-sent; operator resolves
const unknownApplied: After = { state: 'unknown', applied: 1, sends: 1 }; // never re-sent; operator resolves

const NOT_SENT: readonly string[] = ['connection refused', 'DNS failure', 'connect timeout', '429 with Retry-After: 1', '429 without Retry-After'];

// The outcome table (docs/reliability.md): fault × op → the step after the first `once` (fault
// active) and after a second `once` (no fault, same epoch).
const OUTCOMES: Row[] = [
  // fault                                         op         1st once            2nd once
  ['connection refused',                           'claim',   deferred,           reSent],
  ['DNS failure',                                  'claim',   deferred,           reSent],
  ['connect timeout',                              'claim',   deferred,           reSent],
  ['reset before applying',                        'claim',   notAppliedReSent,   notAppliedReSent],
  ['503 before applying',                          'claim',   notAppliedReSent,   notAppliedReSent],
  ['429 with Retry-After: 1',                      'claim',   deferred,           reSent],
  ['429 without Retry-After',                      'claim',   deferred,           reSent],
  ['applied, then connection dropped',             'claim',   reconciledApplied,  reconciledApplied],
  ['applied, then 500',                            'claim',   reconciledApplied,  reconciledApplied],
  ['applied, then no answer until timeout',        'claim',   reconciledApplied,  reconciledApplied],
  ['applied, slow body (beyond the body timeout)', 'claim',   reconciledApplied,  reconciledApplied],
  ['applied, truncated body',                      'claim',   reconciledApplied,  reconciledApplied],
  ['applied, malformed 2xx body',                  'claim',   reconciledApplied,  reconciledApplied],
  ['connection refused',                           'deposit', deferred,           reSent],
  ['DNS failure',                                  'deposit', deferred,           reSent],
  ['connect timeout',                              'deposit', deferred,           reSent],
  ['reset before applying',                        'deposit', unknownNotApplied,  unknownNotApplied],
  ['503 before applying',                          'deposit', unknownNotApplied,  unknownNotApplied],
  ['429 with Retry-After: 1',                      'deposit', deferred,           reSent],
  ['429 without Retry-After',                      'deposit', deferred,           reSent],
  ['applied, then connection dropped',             'deposit', unknownApplied,     unknownApplied],
  ['applied, then 500',                            'deposit', unknownApplied,     unknownApplied],
  ['applied, then no answer until timeout',        'deposit', unknownApplied,     unknownApplied],
  ['applied, slow body (beyond the body timeout)', 'deposit', unknownApplied,     unknownApplied],
  ['applied, truncated body',                      'deposit', unknownApplied,     unknownApplied],
  ['applied, malformed 2xx body',                  'deposit', unknownApplied,     unknownApplied],
  ['connection refused',                           'mint',    deferred,           reSent],
  ['DNS failure',                                  'mint',    deferred,           reSent],
  ['connect timeout',                              'mint',    deferred,           reSent],
  ['reset before applying',                        'mint',    unknownNotApplied,  unknownNotApplied],
  ['503 before applying',                          'mint',    unknownNotApplied,  unknownNotApplied],
  ['429 with Retry-After: 1',                      'mint',    deferred,           reSent],
  ['429 without Retry-After',                      'mint',    deferred,           reSent],
  ['applied, then connection dropped',             'mint',    unknownApplied,     unknownApplied],
  ['applied, then 500',                            'mint',    unknownApplied,     unknownApplied],
  ['applied, then no answer until timeout',        'mint',    unknownApplied,     unknownApplied],
  ['applied, slow body (beyond the body timeout)', 'mint',    unknownApplied,     unknownApplied],
  ['applied, truncated body',                      'mint',    unknownApplied,     unknownApplied],
  ['applied, malformed 2xx body',                  'mint',    unknownApplied,     unknownApplied],
];

function check(world: FaultWorld, r: OnceResult, op: SignedOp, want: After): void {
  expect(r.plans).toHaveLength(1);
  expect(r.state(op)).toBe(want.state);
  expect(world.applied(op)).toHaveLength(want.applied);
  const sends = r.attempts(op);
  expect(sends).toHaveLength(want.sends);
  // Every send is a new signed request: a new x-svc-ts, so a new message and signature.
  expect(new Set(sends.map((a) => a.request?.message)).size).toBe(sends.length);
  expect(new Set(sends.map((a) => a.request?.body)).size).toBe(sends.length);
  // The claim before a deposit or mint went through exactly once whatever happened after it.
  if (op !== 'claim') {
    expect(r.state('claim')).toBe('acknowledged');
    expect(world.applied('claim')).toHaveLength(1);
  }
}

describe('faults on the wire: fault × op → state and server-side applications (SPEC §2)', () => {
  let world: FaultWorld | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it('the table has every fault × op exactly once', () => {
    const keys = OUTCOMES.map(([f, op]) => `${f} × ${op}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.length).toBe(Object.keys(FAULTS).length * 3);
  });

  it.each(OUTCOMES)('%s on %s', async (fault, op, first, second) => {
    world = await openFaultWorld({ rules: RULES[op] });
    const spec = FAULTS[fault];
    if (spec === undefined) throw new Error(`no fault ${fault}`);
    if ('sandbox' in spec) world.sandbox.addFault({ ...spec.sandbox, match: { op, wallet: world.wallet.address } });
    const wireFault = 'wire' in spec ? spec.wire : undefined;

    const one = await runOnce(world, { wireFault, faultOp: op });
    check(world, one, op, first);
    const arrived = world.sandbox.stats().byOp[op] ?? {};
    if (wireFault !== undefined) {
      // Provably not sent: the server never saw the request.
      expect(arrived).toEqual({});
      expect(one.posts[op]).toBeGreaterThan(0);
    }
    if ('sandbox' in spec) expect(world.sandbox.stats().faultsFired).toBe(1);

    const events = one.events.map((e) => e.event);
    if (fault.startsWith('429')) {
      // A 429 is a signal to slow down, never an error to log loudly (SPEC §1).
      expect(one.events.filter((e) => e.level === 'warn' || e.level === 'error')).toEqual([]);
    }
    if (first.state === 'planned') {
      expect(events).toContain('action.deferred');
      expect(events).not.toContain('action.unknown');
    }
    if (first.state === 'unknown') {
      const unknown = one.events.filter((e) => e.event === 'action.unknown');
      expect(unknown).toHaveLength(1);
      expect(unknown[0]?.level).toBe('error');
      expect(String(unknown[0]?.msg)).toMatch(/will NOT be re-sent/);
    }
    if (op === 'claim' && !NOT_SENT.includes(fault)) {
      const rec = one.events.filter((e) => e.event === 'action.reconciled');
      expect(rec.map((e) => e.applied)).toEqual([first.sends === 1]);
    }

    const two = await runOnce(world);
    check(world, two, op, second);
    // ≤ 1 application per step, whatever happened.
    for (const o of ['claim', 'deposit', 'mint'] as const) expect(world.applied(o).length).toBeLessThanOrEqual(1);
  });
});
