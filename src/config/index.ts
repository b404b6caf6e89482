// The config part: load YAML + env, one schema, errors with file:line:col, cross-field checks,
// JSON Schema export, the `check` summary, and cron arithmetic shared with the scheduler.
export { loadConfig, type LoadResult } from './load.js';
export type { LoadedSecrets } from './key-check.js';
export { findConfigPath, loadEnvFile } from './env.js';
export { apiKeySource, describeApiKeySource, resolveApiKey, resolveWebhookSecret } from './secrets.js';
export { configJsonSchema } from './json-schema.js';
export { summarizeConfig } from './summary.js';
export { cronProblem, nextCronTimes } from './cron.js';
