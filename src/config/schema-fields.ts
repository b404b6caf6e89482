// The value types every section of the config schema (schema.ts) is built from: names, SOL
// amounts read exactly, durations, positive integers, and the messages for a wrong or missing value.
import { z } from 'zod';
import { DURATION_PATTERN } from './durations.js';

/** A schema-level message for a present-but-wrong value; a missing value still reads "required". */
export function whenPresent(text: string) {
  return (iss: { input?: unknown; code?: string }) =>
    iss.input === undefined || iss.code === 'unrecognized_keys' ? undefined : text;
}

/** The message for a missing value; wrong values keep the generic phrasing. */
export function whenMissing(text: string) {
  return (iss: { input?: unknown }) => (iss.input === undefined ? text : undefined);
}

const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';
export const name = (what: string) =>
  z
    .string()
    .regex(new RegExp(NAME_PATTERN), {
      error: `a ${what} name is 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`,
    });

export const SOL_DECIMAL_PATTERN = '^(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)$';
export const SOL_MESSAGE = 'expected a SOL amount: a number like 0.5 or a decimal string like "0.5"';

/** SOL, read exactly from the YAML text and converted to lamports. */
export const SolAmount = z
  .union(
    [
      z.number().nonnegative({ error: 'a SOL amount cannot be negative' }),
      z.string().regex(new RegExp(SOL_DECIMAL_PATTERN), { error: SOL_MESSAGE }),
    ],
    { error: whenPresent(SOL_MESSAGE) },
  )
  .describe('SOL amount, exact to the lamport (at most 9 decimals): 0.5 or "0.5"');

const DURATION_MESSAGE = 'expected a duration like 30s, 10m, 6h, 1d or 500ms';
export const Duration = z
  .string({ error: whenPresent(DURATION_MESSAGE) })
  .regex(new RegExp(DURATION_PATTERN), { error: DURATION_MESSAGE });

export const posInt = () => z.number().int().positive();
