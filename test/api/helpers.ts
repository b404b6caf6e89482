// Shared pieces for the API tests: a resolved ApiConfig and the ApiError a call failed with. The
// fake clock and the log capture are test/support's.
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import type { ApiConfig } from '../../src/domain.js';
import { ApiError } from '../../src/errors.js';

export function apiConfig(over: Partial<ApiConfig> = {}): ApiConfig {
  return {
    baseUrl: 'http://api.test/v1',
    headerPrefix: 'x-svc',
    timeoutMs: 2_000,
    connectTimeoutMs: 1_000,
    maxResponseBytes: 1 << 20,
    connections: 4,
    tsWindowMs: 300_000,
    claimSettleMs: 0,
    rateLimit: { perMinute: 0, burst: 100 },
    endpoints: { ...DEFAULT_ENDPOINTS },
    signatureEncoding: 'base58',
    apiKeyFile: undefined,
    authReads: true,
    readAttempts: 3,
    ...over,
  };
}

/** The ApiError a promise rejects with; fails the test if it resolves or rejects otherwise. */
export async function apiError(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}
