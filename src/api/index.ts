// The API edge in one import: client, limiter, schemas, keys and signing.
export { ApiClient, createDispatcher, type ActionResult, type ApiClientOptions, type LeaderboardResult } from './client.js';
export { classifyError, classifyStatus, type Classified } from './classify.js';
export { parseJsonLossless, stringifyLossless } from './json.js';
export { checkAddress, keySourceLabel, loadKey, parseKeyText, writeKeyFile, type LoadKeyOptions } from './keys.js';
export { parseRetryAfter, RateLimiter, type RateLimiterOptions, type Sleep } from './rate-limit.js';
export {
  parseActionResponse,
  parseErrorBody,
  parseLeaderboard,
  parseWalletSummary,
  type ActionResponse,
  type ResponseContext,
} from './schemas.js';
export { buildSignedBody, prepareSigned, type PreparedRequest, type SignedInput } from './signed-request.js';
export { encodeSignature, decodeSignature, generateKeypair, verifySignature, type Signer } from './signer.js';
