// The config part: load YAML + env, one schema, errors with file:line:col, cross-field checks,
// JSON Schema export, the `check` summary, and cron arithmetic shared with the scheduler.
export { loadConfig, loadConfigText, MAX_CONFIG_BYTES, MAX_ALIAS_COUNT } from './load.js';
export type { LoadOptions, LoadResult, TextOptions } from './load.js';
export type { KeyCheckOptions, LoadedSecrets } from './key-check.js';
export { findConfigPath, loadEnvFile, DEFAULT_CONFIG_PATH, DEFAULT_ENV_FILE } from './env.js';
export type { EnvFileResult } from './env.js';
export { resolveApiKey, apiKeySource, describeApiKeySource, resolveWebhookSecret } from './secrets.js';
export type { ApiKeyOptions, ApiKeySource } from './secrets.js';
export { configJsonSchema } from './json-schema.js';
export type { JsonSchema } from './json-schema.js';
export { summarizeConfig, describeRule, describeKey } from './summary.js';
export type { SummaryOptions } from './summary.js';
export { nextCronTimes, cronProblem, cronStepProblem, timezoneProblem } from './cron.js';
export type { CronOptions } from './cron.js';
export { parseDuration } from './durations.js';
