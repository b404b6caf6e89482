// The first once_per_epoch hold a process sees in an epoch is said at info (issue 27: a demo
// restart fired nothing for ~70 s and said why only at debug); repeats, and holds after the
// rule's own firing, stay debug.
import { describe, expect, it } from 'vitest';
import { EpochHoldNotice } from '../../src/executor/epoch-hold.js';

const hold = { rule: 'compound', fired: false, reason: 'once_per_epoch' } as const;
const fired = { rule: 'compound', fired: true, reason: 'fired' } as const;
const condition = { rule: 'compound', fired: false, reason: 'condition' } as const;

describe('EpochHoldNotice', () => {
  it('after a restart: the first hold of an epoch is news, its repeats are not, the next epoch is news again', () => {
    const n = new EpochHoldNotice();
    expect(n.observe('A', 'e1', hold)).toBe(true);
    expect(n.observe('A', 'e1', hold)).toBe(false);
    expect(n.observe('B', 'e1', hold)).toBe(true);
    expect(n.observe('A', 'e1', { ...hold, rule: 'other' })).toBe(true);
    expect(n.observe('A', 'e2', hold)).toBe(true);
  });

  it('a hold after the rule fired in this process is not news; other reasons are never counted', () => {
    const n = new EpochHoldNotice();
    expect(n.observe('A', 'e1', condition)).toBe(false);
    expect(n.observe('A', 'e1', fired)).toBe(false);
    expect(n.observe('A', 'e1', hold)).toBe(false);
    expect(n.observe('A', 'e2', condition)).toBe(false);
    expect(n.observe('A', 'e2', hold)).toBe(true);
  });
});
