// A held-back rule is said at info when it is news, then debug while it repeats. The first
// once_per_epoch hold a process sees in an epoch is news (issue 27: a demo restart fired nothing for
// ~70 s and said why only at debug); so is the first hold for any other reason (a cooldown, a day
// cap), which used to be said at info on every poll for as long as it held (months of running
// review: a line per wallet per poll).
import { describe, expect, it } from 'vitest';
import { HoldNotice } from '../../src/executor/hold-notice.js';

const hold = { rule: 'compound', fired: false, reason: 'once_per_epoch' } as const;
const fired = { rule: 'compound', fired: true, reason: 'fired' } as const;
const condition = { rule: 'compound', fired: false, reason: 'condition' } as const;
const cooldown = { rule: 'compound', fired: false, reason: 'cooldown' } as const;
const dayCap = { rule: 'compound', fired: false, reason: 'max_plans_per_day' } as const;

describe('HoldNotice', () => {
  it('after a restart: the first hold of an epoch is news, its repeats are not, the next epoch is news again', () => {
    const n = new HoldNotice();
    expect(n.observe('A', 'e1', hold)).toBe(true);
    expect(n.observe('A', 'e1', hold)).toBe(false);
    expect(n.observe('B', 'e1', hold)).toBe(true);
    expect(n.observe('A', 'e1', { ...hold, rule: 'other' })).toBe(true);
    expect(n.observe('A', 'e2', hold)).toBe(true);
  });

  it('a once_per_epoch hold after the rule fired in this process is not news; a condition never is', () => {
    const n = new HoldNotice();
    expect(n.observe('A', 'e1', condition)).toBe(false);
    expect(n.observe('A', 'e1', fired)).toBe(false);
    expect(n.observe('A', 'e1', hold)).toBe(false);
    expect(n.observe('A', 'e2', condition)).toBe(false);
    expect(n.observe('A', 'e2', hold)).toBe(true);
  });

  it('a cooldown or a day cap is news once, not on every poll it holds; another reason, or the next epoch, is news again', () => {
    const n = new HoldNotice();
    expect(n.observe('A', 'e1', fired)).toBe(false);
    expect(n.observe('A', 'e1', cooldown)).toBe(true);
    for (let poll = 0; poll < 50; poll++) expect(n.observe('A', 'e1', cooldown)).toBe(false);
    // The condition lapsing for a while says nothing and does not make the cooldown news again.
    expect(n.observe('A', 'e1', condition)).toBe(false);
    expect(n.observe('A', 'e1', cooldown)).toBe(false);
    expect(n.observe('A', 'e1', dayCap)).toBe(true);
    expect(n.observe('A', 'e1', dayCap)).toBe(false);
    expect(n.observe('A', 'e2', dayCap)).toBe(true);
    expect(n.observe('B', 'e2', dayCap)).toBe(true);
  });
});
