// The state store's public face: open the SQLite adapter of the store port, the single-instance
// lock, and the row types callers read. Inside the folder, modules import each other directly:
// port.ts (the contract) and store.ts (its SQLite adapter) over plans.ts, steps.ts, wallets.ts and
// poll-writes.ts (the table families), rows.ts and codecs.ts (types and their mapping), db.ts,
// files.ts and migrations.ts (opening it), ownership.ts and identity.ts (is it ours, still the
// same file), lock.ts (one daemon per state file).
export { openStore, type StoreOptions } from './store.js';
export type { Store } from './port.js';
export type { AttemptRow, PlanWithSteps, StoredRequest } from './rows.js';
export { IN_FLIGHT_ERROR } from './steps.js';
export { acquireLock, lockPaths, type Lock } from './lock.js';
export { SCHEMA_VERSION } from './migrations.js';
export { deriveStatus } from './plans.js';
