// The config part, as the rest of autoclaim uses it. Inside: load.ts runs the pipeline — env.ts
// (.env, where the file is) → read-text.ts and nesting.ts (bounded reading) → yaml's positioned
// document (plain data only: no anchors, aliases, merge keys or tags) → secrets.ts (no secret in the YAML) → schema.ts with schema-fields.ts and
// schema-rules.ts (one zod schema; zod-issues.ts words its problems, salvage.ts sets refused parts
// aside so one pass reports everything) → resolve.ts (lamports, milliseconds, paths; cron.ts and
// durations.ts) → cross-checks.ts → the wallets of wallets-file.ts → key-check.ts (keys and
// secrets where they may be); positions.ts places every issue at file:line:col. json-schema.ts
// exports the schema; summary.ts is `check`'s text.
export { loadConfig, type LoadResult } from './load.js';
export type { LoadedSecrets } from './key-check.js';
export { findConfigPath, loadEnvFile } from './env.js';
export { apiKeySource, describeApiKeySource, resolveApiKey, resolveWebhookSecret } from './secrets.js';
export { configJsonSchema } from './json-schema.js';
export { summarizeConfig } from './summary.js';
export { cronProblem, nextCronTimes } from './cron.js';
