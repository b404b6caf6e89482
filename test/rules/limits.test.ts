// Each limit at its boundary, through decide() so the order and the history filtering are real.
import { describe, expect, it } from 'vitest';
import type { PlanHistoryEntry, RuleLimits } from '../../src/domain.js';
import { decide } from '../../src/rules/decide.js';
import { historyLookbackMs } from '../../src/rules/limits.js';
import { DAY, EPOCH, HOUR, input, MIN, NOW, planned, rule, SOL, summary } from './builders.js';

function decideOne(limits: Partial<RuleLimits>, history: PlanHistoryEntry[], over: { pending?: string; dry?: boolean } = {}) {
  const r = rule('r', { limits });
  const out = decide(input([r], { history, dry: over.dry ?? false, summary: summary({ pendingLamports: SOL(over.pending ?? '1') }) }));
  const d = out.decisions[0];
  if (!d) throw new Error('no decision');
  return { ...d, plans: out.plans };
}

describe('once_per_epoch', () => {
  it.each([
    { name: 'no plan yet', history: [], reason: 'fired' },
    { name: 'a done plan this epoch', history: [planned({ status: 'done' })], reason: 'once_per_epoch' },
    { name: 'an open plan this epoch', history: [planned({ status: 'open' })], reason: 'once_per_epoch' },
    { name: 'a blocked plan this epoch', history: [planned({ status: 'blocked' })], reason: 'once_per_epoch' },
    // Every step rejected: still counts, so a rule the API refuses does not hammer it each poll.
    { name: 'a rejected plan this epoch still counts', history: [planned({ status: 'rejected' })], reason: 'once_per_epoch' },
    // The server refused the request itself (bad signature, headers): the setup, not the action.
    { name: 'a failed plan this epoch does not count', history: [planned({ status: 'failed' })], reason: 'fired' },
    { name: 'a plan in the previous epoch', history: [planned({ epoch: '2024-04-30' })], reason: 'fired' },
    { name: "another rule's plan this epoch", history: [planned({ rule: 'other' })], reason: 'fired' },
  ])('$name → $reason', ({ history, reason }) => {
    expect(decideOne({ oncePerEpoch: true }, history).reason).toBe(reason);
  });

  it('names the epoch and the plan that spent it', () => {
    expect(decideOne({ oncePerEpoch: true }, [planned({ status: 'rejected' })]).detail).toBe(
      `once_per_epoch: already planned in epoch ${EPOCH} (seq 0, rejected)`,
    );
  });
});

describe('cooldown', () => {
  const cooldown = { cooldownMs: 6 * HOUR };
  it.each([
    { name: 'ends exactly this millisecond', createdAt: NOW - 6 * HOUR, reason: 'fired' },
    { name: 'ends one ms from now', createdAt: NOW - 6 * HOUR + 1, reason: 'cooldown' },
    { name: 'long over', createdAt: NOW - 3 * DAY, reason: 'fired' },
    { name: 'created this very ms', createdAt: NOW, reason: 'cooldown' },
    { name: 'clock stepped back: createdAt in the future', createdAt: NOW + 5 * MIN, reason: 'cooldown' },
  ])('$name → $reason', ({ createdAt, reason }) => {
    expect(decideOne(cooldown, [planned({ epoch: '2024-04-30', createdAt })]).reason).toBe(reason);
  });

  it.each([
    { name: 'recorded 7 h ago, its last request went out 1 h ago', movedAt: NOW - HOUR, reason: 'cooldown' },
    { name: 'recorded 7 h ago, its last request went out 6 h ago', movedAt: NOW - 6 * HOUR, reason: 'fired' },
    { name: 'recorded 7 h ago, nothing sent', movedAt: undefined, reason: 'fired' },
  ])('from the last money a plan moved (helper 30): $name → $reason', ({ movedAt, reason }) => {
    expect(decideOne(cooldown, [planned({ epoch: 'x', createdAt: NOW - 7 * HOUR, movedAt })]).reason).toBe(reason);
  });

  it('measures from the latest plan, whatever the history order', () => {
    const history = [planned({ epoch: 'a', createdAt: NOW - HOUR }), planned({ epoch: 'b', createdAt: NOW - 2 * DAY })];
    expect(decideOne(cooldown, history).reason).toBe('cooldown');
  });

  it.each([
    { createdAt: NOW - 6 * HOUR + 2 * HOUR + 13 * MIN, detail: 'cooldown 6h ends in 2h 13m' },
    { createdAt: NOW - 6 * HOUR + 1, detail: 'cooldown 6h ends in 1ms' },
    { createdAt: NOW + 5 * MIN, detail: 'cooldown 6h ends in 6h 5m; the last plan is dated 5m in the future (clock stepped back?)' },
  ])('detail: $detail', ({ createdAt, detail }) => {
    expect(decideOne(cooldown, [planned({ epoch: 'x', createdAt })]).detail).toBe(detail);
  });

  it('a future-dated plan keeps holding until its own cooldown ends', () => {
    const r = rule('r', { limits: cooldown });
    const history = [planned({ epoch: 'x', createdAt: NOW + HOUR })];
    const at = (now: number) => decide(input([r], { history, now })).decisions[0]?.reason;
    expect(at(NOW + 7 * HOUR - 1)).toBe('cooldown');
    expect(at(NOW + 7 * HOUR)).toBe('fired');
  });
});

describe('max_plans_per_day', () => {
  it.each([
    { name: 'plan exactly 24h ago is outside the window', history: [planned({ epoch: 'x', createdAt: NOW - DAY })], max: 1, reason: 'fired' },
    { name: 'plan 24h minus 1 ms ago is inside', history: [planned({ epoch: 'x', createdAt: NOW - DAY + 1 })], max: 1, reason: 'max_plans_per_day' },
    { name: 'one below the max', history: [planned({ epoch: 'x', createdAt: NOW - HOUR })], max: 2, reason: 'fired' },
    { name: 'at the max', history: [planned({ epoch: 'x', createdAt: NOW - HOUR }), planned({ epoch: 'y', createdAt: NOW - 2 * HOUR })], max: 2, reason: 'max_plans_per_day' },
    { name: 'a plan this very ms counts', history: [planned({ epoch: 'x', createdAt: NOW })], max: 1, reason: 'max_plans_per_day' },
    { name: 'a future-dated plan counts (clock stepped back)', history: [planned({ epoch: 'x', createdAt: NOW + HOUR })], max: 1, reason: 'max_plans_per_day' },
    { name: 'rejected plans count', history: [planned({ epoch: 'x', createdAt: NOW - HOUR, status: 'rejected' })], max: 1, reason: 'max_plans_per_day' },
    { name: 'failed plans do not count', history: [planned({ epoch: 'x', createdAt: NOW - HOUR, status: 'failed' })], max: 1, reason: 'fired' },
  ])('$name → $reason', ({ history, max, reason }) => {
    expect(decideOne({ maxPlansPerDay: max }, history).reason).toBe(reason);
  });

  it('detail counts the plans', () => {
    const history = [planned({ epoch: 'x', createdAt: NOW - HOUR }), planned({ epoch: 'y', createdAt: NOW - 2 * HOUR })];
    expect(decideOne({ maxPlansPerDay: 2 }, history).detail).toBe('max_plans_per_day 2: 2 plans in the last 24h');
  });
});

describe('max_sol_per_day', () => {
  const limit = { maxLamportsPerDay: SOL('25') };
  const spent = [planned({ epoch: 'x', createdAt: NOW - HOUR, lamports: SOL('24.5') })];
  it.each([
    { name: 'spent + estimate exactly equal to the limit', history: spent, pending: '0.5', reason: 'fired' },
    { name: 'one lamport over', history: spent, pending: '0.500000001', reason: 'max_sol_per_day' },
    { name: 'the spend fell out of the window (exactly 24h ago)', history: [planned({ epoch: 'x', createdAt: NOW - DAY, lamports: SOL('24.5') })], pending: '1', reason: 'fired' },
    { name: 'the spend is 1 ms inside the window', history: [planned({ epoch: 'x', createdAt: NOW - DAY + 1, lamports: SOL('24.5') })], pending: '1', reason: 'max_sol_per_day' },
    { name: 'no history, estimate alone over', history: [], pending: '25.000000001', reason: 'max_sol_per_day' },
  ])('$name → $reason', ({ history, pending, reason }) => {
    expect(decideOne(limit, history, { pending }).reason).toBe(reason);
  });

  it('detail shows the arithmetic in SOL', () => {
    expect(decideOne(limit, spent, { pending: '0.500000001' }).detail).toBe(
      'max_sol_per_day 25: 24.5 SOL in the last 24h + 0.500000001 SOL now = 25.000000001 SOL',
    );
  });
});

describe('limit order: the first that fails is the reason', () => {
  const recent = planned({ createdAt: NOW - HOUR, lamports: SOL('30') });
  const all: Partial<RuleLimits> = { oncePerEpoch: true, cooldownMs: 6 * HOUR, maxPlansPerDay: 1, maxLamportsPerDay: SOL('25') };
  it.each([
    { limits: all, reason: 'once_per_epoch' },
    { limits: { ...all, oncePerEpoch: false }, reason: 'cooldown' },
    { limits: { ...all, oncePerEpoch: false, cooldownMs: undefined }, reason: 'max_plans_per_day' },
    { limits: { ...all, oncePerEpoch: false, cooldownMs: undefined, maxPlansPerDay: undefined }, reason: 'max_sol_per_day' },
    { limits: { oncePerEpoch: false }, reason: 'fired' },
  ])('$reason', ({ limits, reason }) => {
    expect(decideOne(limits, [recent]).reason).toBe(reason);
  });
});

describe('dry and real history are separate', () => {
  const limits = { oncePerEpoch: true, cooldownMs: 6 * HOUR, maxPlansPerDay: 1, maxLamportsPerDay: SOL('1') };
  const recent = { createdAt: NOW - HOUR, lamports: SOL('5') };
  it.each([
    { name: 'real plan, real run', history: [planned({ ...recent, dry: false })], dry: false, reason: 'once_per_epoch' },
    { name: 'real plan, dry run', history: [planned({ ...recent, dry: false })], dry: true, reason: 'fired' },
    { name: 'dry plan, dry run', history: [planned({ ...recent, dry: true, status: 'dry' })], dry: true, reason: 'once_per_epoch' },
    { name: 'dry plan, real run', history: [planned({ ...recent, dry: true, status: 'dry' })], dry: false, reason: 'fired' },
  ])('$name → $reason', ({ history, dry, reason }) => {
    expect(decideOne(limits, history, { dry }).reason).toBe(reason);
  });
});

describe('seq', () => {
  it.each([
    { name: 'once_per_epoch is always 0', limits: { oncePerEpoch: true }, history: [], seq: 0 },
    { name: 'first plan of the epoch', limits: {}, history: [], seq: 0 },
    { name: 'after two plans this epoch', limits: {}, history: [planned({ seq: 0 }), planned({ seq: 1 })], seq: 2 },
    { name: 'plans of other epochs do not count', limits: {}, history: [planned({ epoch: 'x', seq: 0 }), planned({ epoch: 'x', seq: 1 })], seq: 0 },
    { name: 'plans of other rules do not count', limits: {}, history: [planned({ rule: 'other', seq: 0 })], seq: 0 },
    { name: 'dry plans do not count for a real run', limits: {}, history: [planned({ dry: true, seq: 0 })], seq: 0 },
    // Never reuse a seq that exists, even if one in between was removed.
    { name: 'past the highest seq when there is a gap', limits: {}, history: [planned({ seq: 2 }), planned({ seq: 0 })], seq: 3 },
  ])('$name → $seq', ({ limits, history, seq }) => {
    expect(decideOne(limits, history).plans[0]?.seq).toBe(seq);
  });
});

describe('historyLookbackMs: how far back the history is read (time and restarts review, helper 30)', () => {
  it.each([
    { name: 'no rules: the rolling day', rules: [], ms: DAY },
    { name: 'cooldowns under a day: the rolling day', rules: [rule('a', { limits: { cooldownMs: 6 * HOUR } }), rule('b')], ms: DAY },
    { name: 'the longest cooldown when it is longer', rules: [rule('a', { limits: { cooldownMs: 3 * DAY } }), rule('b', { limits: { cooldownMs: 2 * DAY } })], ms: 3 * DAY },
  ])('$name', ({ rules, ms }) => {
    expect(historyLookbackMs(rules)).toBe(ms);
  });
});
