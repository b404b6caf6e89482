// The report of a daemon with nothing wrong, that the readiness tests change one field at a time.
import type { HealthReport } from '../../src/service/readiness.js';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const T0 = 1_800_000_000_000;

export const healthy: HealthReport = {
  now: T0,
  lastSuccessAt: T0 - MINUTE,
  startedAt: T0 - HOUR,
  pollIntervalMs: MINUTE,
  staleAfterIntervals: 3,
  dbError: undefined,
  signing: { all: undefined, wallets: new Map() },
  signersDown: [],
  configValid: true,
};
