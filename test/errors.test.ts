import { describe, expect, it } from 'vitest';
import { ApiError, AutoclaimError, ConfigError, KeyError, StateError, type ErrorCode } from '../src/errors.js';

// The codes are a closed union: `npx tsc --noEmit` (which covers test/) fails if a misspelt code
// stops being an error, because each @ts-expect-error below would then be unused.
describe('named error codes', () => {
  it('each class carries the code it was given', () => {
    expect(new KeyError('KEY_MISSING', 'm').code).toBe('KEY_MISSING');
    expect(new StateError('STATE_LOCKED', 'm').code).toBe('STATE_LOCKED');
    expect(new ApiError('RATE_LIMITED', 'm', { method: 'GET', url: 'u', disposition: 'refused' }).code).toBe('RATE_LIMITED');
    expect(new ConfigError([]).code).toBe('CONFIG_INVALID');
    const code: ErrorCode = 'LISTEN_INVALID';
    expect(new AutoclaimError(code, 'm')).toBeInstanceOf(Error);
  });

  it('refuses a misspelt code or one of another class at compile time', () => {
    const make = (): unknown[] => [
      // @ts-expect-error not a code
      new AutoclaimError('STATE_LOKED', 'm'),
      // @ts-expect-error a state code is not a key code
      new KeyError('STATE_IO', 'm'),
      // @ts-expect-error a key code is not a state code
      new StateError('KEY_MISSING', 'm'),
      // @ts-expect-error an HTTP failure code only
      new ApiError('KEY_MISSING', 'm', { method: 'GET', url: 'u', disposition: 'refused' }),
    ];
    const err = new StateError('STATE_IO', 'm') as AutoclaimError;
    // @ts-expect-error comparing with a code that does not exist
    const typo = err.code === 'STATE_LOKED';
    expect(typo).toBe(false);
    expect(make()).toHaveLength(4);
  });
});
