import { describe, expect, it } from 'vitest';
import { evaluateReadiness, type HealthReport } from '../../src/service/readiness.js';
import { HOUR, MINUTE, T0, healthy } from './health-report.js';

const failing = (r: HealthReport) => Object.entries(evaluateReadiness(r).checks).filter(([, c]) => !c.ok).map(([k]) => k);

describe('evaluateReadiness', () => {
  it('is ready when a poll succeeded lately, the database takes a write and signing runs', () => {
    const r = evaluateReadiness(healthy);
    expect(r).toMatchObject({ ready: true, reasons: [] });
    expect(r.checks.poll).toMatchObject({ ok: true, ageMs: MINUTE, maxAgeMs: 3 * MINUTE, lastSuccessAt: new Date(T0 - MINUTE).toISOString() });
  });

  it.each([
    ['no poll has succeeded for just over 3 intervals', { lastSuccessAt: T0 - 3 * MINUTE - 1 }, ['poll'], /^poll: no wallet poll has succeeded for 3m \(more than 3 poll interval\(s\) of 60s\)$/],
    ['no poll ever succeeded, started 4 intervals ago', { lastSuccessAt: undefined, startedAt: T0 - 4 * MINUTE }, ['poll'], /^poll: no wallet poll has succeeded since the start 4m ago/],
    ['the database refuses the write probe', { dbError: 'attempt to write a readonly database' }, ['db'], /^db: the state database cannot be written: attempt to write a readonly database$/],
    [
      'signing paused for every wallet',
      { signing: { all: { reason: 'HTTP 401: unauthorized', since: T0 - MINUTE }, wallets: new Map() } },
      ['signing'],
      /^signing: paused for every wallet since .*: HTTP 401: unauthorized$/,
    ],
    [
      'signing paused for one wallet',
      { signing: { all: undefined, wallets: new Map([['Addr1', { reason: 'HTTP 400: bad_signature', since: T0 }]]) } },
      ['signing'],
      /^signing: paused for 1 wallet\(s\): Addr1: HTTP 400: bad_signature$/,
    ],
    [
      'a wallet whose signer has not answered for longer than the alert waits',
      { signersDown: [{ wallet: 'treasury', backend: 'vault', code: 'SIGNER_UNAVAILABLE', since: T0 - 2 * MINUTE }] },
      ['signer'],
      /^signer: 1 wallet\(s\) whose signer has not answered: treasury \(vault, SIGNER_UNAVAILABLE, since 2027-01-15T07:58:00\.000Z\)$/,
    ],
  ] as const)('is not ready: %s, and says why', (_name, change, checks, reason) => {
    const r = evaluateReadiness({ ...healthy, ...change });
    expect(r.ready).toBe(false);
    expect(failing({ ...healthy, ...change })).toEqual(checks);
    expect(r.reasons).toHaveLength(1);
    expect(r.reasons[0]).toMatch(reason);
  });

  it('names every failing reason at once', () => {
    const r = evaluateReadiness({
      ...healthy,
      lastSuccessAt: T0 - HOUR,
      dbError: 'disk I/O error',
      signing: { all: { reason: 'HTTP 403', since: T0 }, wallets: new Map() },
      signersDown: [{ wallet: 'w', backend: 'signer', code: '', since: T0 - HOUR }],
    });
    expect(r.reasons.map((x) => x.slice(0, x.indexOf(':')))).toEqual(['poll', 'db', 'signing', 'signer']);
  });

  it('stays ready while a refused reload leaves the previous config running, and says so', () => {
    const r = evaluateReadiness({ ...healthy, configValid: false });
    expect(r.ready).toBe(true);
    expect(r.checks.config).toMatchObject({ ok: true, detail: expect.stringMatching(/last reload was refused.*previous config is running/) });
  });

  it('is ready before the first cycle of a long schedule, from the last success the state file recorded', () => {
    // Hourly polls, restarted 10 minutes ago, the last success 40 minutes before the restart.
    const hourly = { ...healthy, pollIntervalMs: HOUR, startedAt: T0 - 10 * MINUTE, lastSuccessAt: T0 - 50 * MINUTE };
    expect(evaluateReadiness(hourly).ready).toBe(true);
    // A fresh state file: counted from the start.
    expect(evaluateReadiness({ ...hourly, lastSuccessAt: undefined }).checks.poll).toMatchObject({ ok: true, detail: 'no successful poll yet; started 10m ago' });
  });

  it('is not ready after a restart when the state file says no poll succeeded for too long (a restart hides nothing)', () => {
    const r = evaluateReadiness({ ...healthy, startedAt: T0 - 5_000, lastSuccessAt: T0 - 2 * HOUR });
    expect(r.ready).toBe(false);
    expect(r.reasons[0]).toMatch(/no wallet poll has succeeded for 2h 0m/);
  });

  it('counts a success exactly 3 intervals ago, or one in the future (clock stepped back), as recent', () => {
    expect(evaluateReadiness({ ...healthy, lastSuccessAt: T0 - 3 * MINUTE }).ready).toBe(true);
    expect(evaluateReadiness({ ...healthy, lastSuccessAt: T0 + MINUTE }).checks.poll).toMatchObject({ ok: true, ageMs: 0 });
  });

  it('names at most five paused wallets but counts them all', () => {
    const wallets = new Map(Array.from({ length: 8 }, (_, i) => [`Addr${i}`, { reason: 'HTTP 400', since: T0 }] as const));
    const r = evaluateReadiness({ ...healthy, signing: { all: undefined, wallets } });
    expect(r.checks.signing).toMatchObject({ ok: false, wallets: 8, all: false });
    expect(r.checks.signing.detail.match(/Addr/g)).toHaveLength(5);
    const down = Array.from({ length: 7 }, (_, i) => ({ wallet: `w${i}`, backend: 'aws_kms', code: 'SIGNER_UNAVAILABLE', since: T0 }));
    const s = evaluateReadiness({ ...healthy, signersDown: down });
    expect(s.checks.signer).toMatchObject({ ok: false, wallets: 7 });
    expect(s.checks.signer.detail.match(/aws_kms/g)).toHaveLength(5);
  });
});
