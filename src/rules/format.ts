// Text for decision details. A detail is read by an operator wondering why a rule did or did not
// fire, so amounts are SOL (never lamports or floats) and durations are short and human.
import { formatSol, type Lamports } from '../amount.js';
import type { AmountSpec, StepSpec } from '../domain.js';

/** formatSol that never throws: a detail must not be the thing that breaks a decision. */
export function sol(lamports: Lamports): string {
  try {
    return formatSol(lamports);
  } catch {
    return `${lamports} lamports`;
  }
}

const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/**
 * "2h 13m", "45s", "1d 6h": the two largest units, rounded down. Under a second reads in ms so a
 * boundary case never shows as "0s".
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return `${ms}ms`;
  if (ms < 1_000) return `${Math.floor(ms)}ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || parts.length > 0) parts.push(`${n}${unit}`);
    if (parts.length === 2) break;
  }
  // "2h 0m" says nothing "2h" does not.
  return parts.filter((p, i) => i === 0 || !/^0\D/.test(p)).join(' ');
}

/** "12.5%" from 125000 ppm. */
export function formatPpm(ppm: number): string {
  const whole = Math.trunc(ppm / 10_000);
  const frac = (ppm % 10_000).toString().padStart(4, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}%` : `${whole}%`;
}

/** "1.5 SOL", "50% of the claim", "all of the claim". */
function describeAmount(spec: AmountSpec): string {
  switch (spec.kind) {
    case 'fixed':
      return `${sol(spec.lamports)} SOL`;
    case 'percent':
      return `${formatPpm(spec.ppm)} of the claim`;
    case 'all':
      return 'all of the claim';
  }
}

/**
 * One step in words, the same in decision details, plan logs and `autoclaim check`: "claim",
 * "deposit 50% of the claim into SOL2X", "mint JLP2X with 1.5 SOL", "withdraw 1 SOL2X vault
 * shares", "burn 2 JLP2X tokens": a withdraw's amount is the vault's shares and a burn's the
 * token's units, not SOL (rules/amounts.ts movesSol), and reading "withdraw 1 SOL" an operator
 * would expect a SOL value out, whatever a share is worth.
 */
export function describeStep(step: StepSpec): string {
  if (step.kind === 'claim') return 'claim';
  const amount = describeAmount(step.amount);
  switch (step.kind) {
    case 'deposit':
      return `deposit ${amount} into ${step.symbol}`;
    case 'mint':
      return `mint ${step.symbol} with ${amount}`;
    case 'withdraw':
      return step.amount.kind === 'fixed' ? `withdraw ${sol(step.amount.lamports)} ${step.symbol} vault shares` : `withdraw ${amount} from ${step.symbol}`;
    case 'burn':
      return step.amount.kind === 'fixed' ? `burn ${sol(step.amount.lamports)} ${step.symbol} tokens` : `burn ${step.symbol} for ${amount}`;
  }
}
