// SOL amounts are integer lamports (bigint) everywhere inside autoclaim. Floats never carry money:
// 0.1 + 0.2 is not 0.3, and a claim of 0.30000000000000004 SOL is not a thing anyone wants to sign.

export type Lamports = bigint;

export const LAMPORTS_PER_SOL = 1_000_000_000n;
const FRACTION_DIGITS = 9;
/** u64::MAX: the largest lamport count a Solana account can hold; anything above is nonsense. */
export const MAX_LAMPORTS: Lamports = 18_446_744_073_709_551_615n;

export class AmountError extends Error {
  override readonly name = 'AmountError';
  constructor(
    message: string,
    readonly input: string,
  ) {
    super(message);
  }
}

// The wire format of SPEC §1: no sign, no exponent, at most 9 fractional digits, no trailing zeros.
const CANONICAL = /^(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$/;
// What we accept from an operator or a server: leading/trailing zeros and exponents are tolerated
// as long as the value is exact to the lamport.
const DECIMAL = /^([0-9]+)?(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,4}))?$/;

/** Formats lamports as the canonical decimal SOL string that is signed and sent. */
export function formatSol(lamports: Lamports): string {
  if (lamports < 0n) throw new AmountError('amount is negative', lamports.toString());
  if (lamports > MAX_LAMPORTS) throw new AmountError('amount exceeds u64 lamports', lamports.toString());
  const whole = lamports / LAMPORTS_PER_SOL;
  const frac = lamports % LAMPORTS_PER_SOL;
  if (frac === 0n) return whole.toString();
  const digits = frac.toString().padStart(FRACTION_DIGITS, '0').replace(/0+$/, '');
  return `${whole}.${digits}`;
}

/** True when `text` is exactly what formatSol would write for some amount. */
export function isCanonicalSol(text: string): boolean {
  return CANONICAL.test(text) && (text.split('.')[1]?.length ?? 0) <= FRACTION_DIGITS;
}

/** Parses the strict wire form (what a signed body must carry). */
export function parseCanonicalSol(text: string): Lamports {
  if (!isCanonicalSol(text)) {
    throw new AmountError(
      'expected a decimal SOL amount with at most 9 fractional digits, no exponent and no trailing zeros',
      text,
    );
  }
  return parseSol(text);
}

/**
 * Parses a non-negative decimal SOL amount exactly. Accepts exponents and redundant zeros
 * ("1.50", "5e-1") but refuses anything that is not a whole number of lamports, negative,
 * or above u64 lamports. What config and signed bodies go through.
 */
export function parseSol(text: string): Lamports {
  const d = decimalOf(text, 64);
  if (d.negative) throw new AmountError('not a non-negative decimal amount', text);
  const { lamports, dropped } = toLamports(d, text);
  if (dropped) throw new AmountError('amount is finer than one lamport (at most 9 fractional digits)', text);
  return lamports;
}

/** A server's amount, and whether digits below the lamport were dropped to get it. */
interface ServerAmount {
  lamports: Lamports;
  rounded: boolean;
}

/**
 * Reads an amount as servers write it: a float-serialising server sends `0.30000000000000004`, and
 * any JSON number may use an exponent (`1e-9`, `2.5E3`). The value is converted exactly from its
 * decimal text and rounded toward zero to the lamport (never up: a claim never counts on a
 * fraction of a lamport that is not there); `rounded` says digits were dropped. A negative that
 * rounds to zero (`-0`, `-2.7e-17`, the residue of a float subtraction) is 0, rounded. Still
 * refused: a negative of a lamport or more, anything that is not a decimal number, and anything
 * above u64 lamports (about 1.8e10 SOL, some thirty times the SOL supply: no real balance).
 */
export function parseServerSol(text: string): ServerAmount {
  const d = decimalOf(text, 256);
  const { lamports, dropped } = toLamports(d, text);
  if (d.negative && lamports !== 0n) throw new AmountError('amount is negative', text);
  return { lamports, rounded: dropped || (d.negative && /[1-9]/.test(d.digits)) };
}

interface Decimal {
  negative: boolean;
  /** Significant digits without leading zeros ("0" for zero): value = digits × 10^(shift − 9). */
  digits: string;
  /** Power of ten that turns `digits` into lamports. */
  shift: number;
}

function decimalOf(text: string, maxLength: number): Decimal {
  const input = text.trim();
  if (input.length === 0 || input.length > maxLength) throw new AmountError('not a decimal amount', text);
  const negative = input.startsWith('-');
  const m = DECIMAL.exec(negative ? input.slice(1) : input);
  if (!m || (m[1] === undefined && (m[2] === undefined || m[2] === ''))) {
    throw new AmountError('not a non-negative decimal amount', text);
  }
  const fracPart = m[2] ?? '';
  const exp = m[3] === undefined ? 0 : Number(m[3]);
  // value = digits * 10^(exp - fracLen); lamports = value * 10^9
  return { negative, digits: ((m[1] ?? '') + fracPart).replace(/^0+(?=\d)/, '') || '0', shift: exp - fracPart.length + FRACTION_DIGITS };
}

/** Whole lamports toward zero, and whether any non-zero digit fell below the lamport. */
function toLamports({ digits, shift }: Decimal, text: string): { lamports: Lamports; dropped: boolean } {
  let lamports: bigint;
  let dropped = false;
  if (shift >= 0) {
    if (digits !== '0' && digits.length + shift > 21) throw new AmountError('amount exceeds u64 lamports', text);
    lamports = BigInt(digits) * 10n ** BigInt(shift);
  } else {
    const cut = -shift;
    const kept = digits.length > cut ? digits.slice(0, digits.length - cut) : '0';
    const below = digits.length > cut ? digits.slice(digits.length - cut) : digits;
    dropped = /[1-9]/.test(below);
    lamports = BigInt(kept);
  }
  if (lamports > MAX_LAMPORTS) throw new AmountError('amount exceeds u64 lamports', text);
  return { lamports, dropped };
}

/** For display only (tables, metrics gauges). Never feed the result back into a decision. */
export function lamportsToDisplayNumber(lamports: Lamports): number {
  return Number(lamports) / 1e9;
}
