// The failover test's judge on small cases: each rule it applies to a chaotic run catches what it
// is there to catch, so a green failover run means something.
import { describe, expect, it } from 'vitest';
import type { LedgerEntry } from '../../src/sandbox/server.js';
import { checkLedger, epochLabel, qualifyingEpochs, type EpochGeometry, type RecordedStep } from './ledger-check.js';

const g: EpochGeometry = { origin: 1_000_000, epochMs: 3_000 };
const at = (epoch: number, offset = 500) => g.origin + epoch * g.epochMs + offset;

function entry(wallet: string, op: 'claim' | 'deposit', ts: number, signature: string): LedgerEntry {
  return { seq: 0, op, wallet, symbol: null, amountLamports: 1n, epoch: '', ts, tx: '', signature };
}
const step = (stepId: number, address: string, kind: string, planEpoch: number, ...signatures: string[]): RecordedStep => ({
  stepId,
  address,
  kind,
  planEpoch: epochLabel(g, planEpoch),
  signatures,
});

describe('qualifyingEpochs', () => {
  it('keeps whole epochs in range that start settleMs after every disruption and see none', () => {
    const range = { from: at(0, 0), to: at(10, 0) };
    expect(qualifyingEpochs(g, [], range, 2_000)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // A pause from inside epoch 3 into epoch 4: epochs 3 and 4 are touched, 5 starts too soon after.
    const d = [{ from: at(3, 2_000), to: at(4, 1_000), what: 'pause' }];
    expect(qualifyingEpochs(g, d, range, 2_000)).toEqual([0, 1, 2, 6, 7, 8, 9]);
    // An epoch cut by the range's end is not judged.
    expect(qualifyingEpochs(g, [], { from: at(0, 1), to: at(2, 2_999) }, 0)).toEqual([1]);
  });
});

describe('checkLedger', () => {
  const base = { geometry: g, qualifying: [] as number[], addresses: ['A', 'B'], ops: ['claim'] };

  it('passes a ledger where every action is a recorded step, once per wallet and epoch', () => {
    const ledger = [entry('A', 'claim', at(1), 's1'), entry('B', 'claim', at(1), 's2')];
    const steps = [step(1, 'A', 'claim', 1, 's1'), step(2, 'B', 'claim', 1, 's2')];
    expect(checkLedger({ ...base, ledger, steps, qualifying: [1] })).toEqual({ unexplained: [], doubles: [], missing: [] });
  });

  it('names an applied action no step recorded (a send that was never fenced)', () => {
    const ledger = [entry('A', 'claim', at(1), 'ghost')];
    expect(checkLedger({ ...base, ledger, steps: [step(1, 'A', 'claim', 1, 's1')] }).unexplained).toEqual(ledger);
    // The signature of another wallet's step explains nothing.
    expect(checkLedger({ ...base, ledger: [entry('B', 'claim', at(1), 's1')], steps: [step(1, 'A', 'claim', 1, 's1')] }).unexplained).toHaveLength(1);
  });

  it('names two claims of one plan epoch, and a step applied twice', () => {
    const twoPlans = checkLedger({
      ...base,
      ledger: [entry('A', 'claim', at(1), 's1'), entry('A', 'claim', at(1, 2_000), 's2')],
      steps: [step(1, 'A', 'claim', 1, 's1'), step(2, 'A', 'claim', 1, 's2')],
    });
    expect(twoPlans.doubles).toEqual([`A claim ${epochLabel(g, 1)}: 2`]);
    const twoAttempts = checkLedger({
      ...base,
      ledger: [entry('A', 'claim', at(1), 's1'), entry('A', 'claim', at(1, 1_000), 's1b')],
      steps: [step(1, 'A', 'claim', 1, 's1', 's1b')],
    });
    expect(twoAttempts.doubles).toContain('step 1 applied 2 times');
  });

  it('counts by the plan epoch: a late plan of epoch 1 applied in epoch 2 beside epoch 2’s own is no double', () => {
    const v = checkLedger({
      ...base,
      ledger: [entry('A', 'claim', at(2, 100), 's1'), entry('A', 'claim', at(2, 200), 's2')],
      steps: [step(1, 'A', 'claim', 1, 's1'), step(2, 'A', 'claim', 2, 's2')],
    });
    expect(v.doubles).toEqual([]);
  });

  it('names each wallet not claimed in a qualifying epoch', () => {
    const v = checkLedger({ ...base, ledger: [entry('A', 'claim', at(1), 's1')], steps: [step(1, 'A', 'claim', 1, 's1')], qualifying: [1, 2] });
    expect(v.missing).toEqual([`B claim ${epochLabel(g, 1)}`, `A claim ${epochLabel(g, 2)}`, `B claim ${epochLabel(g, 2)}`]);
  });
});
