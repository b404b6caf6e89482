// SPEC §2: a server's epoch is a claim about the calendar. The table of what judgeEpoch believes,
// and the one exemption (the sandbox's fast demo epochs).
import { describe, expect, it } from 'vitest';
import { epochsExempt, judgeEpoch, type EpochRefusal } from '../../src/executor/epoch-check.js';

const NOW = Date.UTC(2026, 10, 26, 3, 0, 0); // 2026-11-26T03:00Z

describe('judgeEpoch', () => {
  const cases: Array<[string, string | undefined, EpochRefusal | 'ok']> = [
    ['2026-11-26', undefined, 'ok'],
    ['2026-11-25', undefined, 'ok'], // a server a time zone behind
    ['2026-11-27', undefined, 'ok'], // a rollover in flight, or a time zone ahead
    ['2026-11-28', undefined, 'too_far'],
    ['2026-11-24', undefined, 'too_far'],
    ['2099-01-01', undefined, 'too_far'],
    ['1970-01-01', undefined, 'too_far'],
    ['2025-02-30', undefined, 'not_a_date'],
    ['2026-02-29', undefined, 'not_a_date'],
    ['2026-11-26T00:00:00Z', undefined, 'not_a_date'],
    ['26-11-2026', undefined, 'not_a_date'],
    ['', undefined, 'not_a_date'],
    ['2026-11-26', '2026-11-26', 'ok'],
    ['2026-11-27', '2026-11-26', 'ok'],
    ['2026-11-25', '2026-11-26', 'backward'],
    ['2026-11-26', '2026-11-27', 'backward'],
    // A recorded epoch the check could never have believed (recorded before it existed): not held against the wallet.
    ['2026-11-26', '2099-01-01', 'ok'],
    ['2026-11-26', '2026-11-28', 'ok'],
  ];
  it.each(cases)('%s after %s: %s', (epoch, last, expected) => {
    const verdict = judgeEpoch({ epoch, nowMs: NOW, last, exempt: false });
    expect(verdict.ok ? 'ok' : verdict.why).toBe(expected);
  });

  it('measures a day from the UTC date, whatever the hour', () => {
    const lateNight = Date.UTC(2026, 10, 26, 23, 59, 59);
    const justAfterMidnight = Date.UTC(2026, 10, 26, 0, 0, 1);
    for (const now of [lateNight, justAfterMidnight]) {
      expect(judgeEpoch({ epoch: '2026-11-27', nowMs: now, last: undefined, exempt: false }).ok).toBe(true);
      expect(judgeEpoch({ epoch: '2026-11-28', nowMs: now, last: undefined, exempt: false }).ok).toBe(false);
      expect(judgeEpoch({ epoch: '2026-11-24', nowMs: now, last: undefined, exempt: false }).ok).toBe(false);
    }
  });

  it('says what it refused and why, in words', () => {
    expect(judgeEpoch({ epoch: '2099-01-01', nowMs: NOW, last: undefined, exempt: false })).toMatchObject({
      ok: false,
      detail: expect.stringContaining("ahead of this machine's UTC date 2026-11-26"),
    });
    expect(judgeEpoch({ epoch: '2026-11-25', nowMs: NOW, last: '2026-11-26', exempt: false })).toMatchObject({
      detail: 'epoch 2026-11-25 is before 2026-11-26, the last epoch recorded for this wallet',
    });
  });

  it('exempt (the fast sandbox): only a real date is asked for', () => {
    expect(judgeEpoch({ epoch: '2099-01-01', nowMs: NOW, last: '2100-01-01', exempt: true }).ok).toBe(true);
    expect(judgeEpoch({ epoch: '2025-02-30', nowMs: NOW, last: undefined, exempt: true })).toMatchObject({ ok: false, why: 'not_a_date' });
  });
});

describe('epochsExempt: the narrowest exemption', () => {
  const fast = { epochMs: 60_000 };
  const daily = { epochMs: 86_400_000 };
  const cases: Array<[string, string, { epochMs: number }, NodeJS.ProcessEnv, boolean]> = [
    ['the in-process sandbox with fast epochs (npm start)', 'sandbox', fast, {}, true],
    ['the in-process sandbox with day-long epochs', 'sandbox', daily, {}, false],
    ['a real API', 'https://rewards.example.com/v1', fast, {}, false],
    ['a real API, whatever the environment says', 'https://rewards.example.com/v1', fast, { AUTOCLAIM_SANDBOX_EPOCHS: 'fast' }, false],
    ['an API on a remote http host with the variable', 'http://10.0.0.5:8787/v1', fast, { AUTOCLAIM_SANDBOX_EPOCHS: 'fast' }, false],
    ['a loopback sandbox without the variable', 'http://127.0.0.1:8787/v1', fast, {}, false],
    ['a loopback sandbox with the variable', 'http://127.0.0.1:8787/v1', fast, { AUTOCLAIM_SANDBOX_EPOCHS: 'fast' }, true],
    ['localhost with the variable', 'http://localhost:8787/v1', fast, { AUTOCLAIM_SANDBOX_EPOCHS: 'fast' }, true],
    ['[::1] with the variable', 'http://[::1]:8787/v1', fast, { AUTOCLAIM_SANDBOX_EPOCHS: 'fast' }, true],
    ['a host named like loopback', 'http://127.0.0.1.evil.example/v1', fast, { AUTOCLAIM_SANDBOX_EPOCHS: 'fast' }, false],
    ['the variable set to anything else', 'http://127.0.0.1:8787/v1', fast, { AUTOCLAIM_SANDBOX_EPOCHS: '1' }, false],
  ];
  it.each(cases)('%s', (_what, baseUrl, sandbox, env, expected) => {
    expect(epochsExempt({ api: { baseUrl }, sandbox }, env)).toBe(expected);
  });
});
