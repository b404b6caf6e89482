// The state store's public face: open the SQLite adapter of the store port, the single-instance
// lock, and the row types callers read. Inside the folder, modules import each other directly.
export { openStore, type StoreOptions } from './store.js';
export type { Store } from './port.js';
export type { AttemptRow, PlanWithSteps, StoredRequest } from './rows.js';
export { IN_FLIGHT_ERROR } from './steps.js';
export { acquireLock, lockPaths, type Lock } from './lock.js';
export { SCHEMA_VERSION } from './migrations.js';
export { deriveStatus } from './plans.js';
