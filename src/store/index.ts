// The state store's public face: open an adapter of the store port, the single-instance lock, and
// the row types callers read. port.ts is the contract; sqlite/ is its default adapter (one state
// file: db.ts, files.ts and migrations.ts open it, ownership.ts and identity.ts check it is ours and
// still the same file, lock.ts keeps one daemon per file, plans.ts, steps.ts and wallets.ts are its
// table families). Beside them, shared by every adapter: step-machine.ts (the step transitions,
// written once, each adapter running them in its dialect), rows.ts and codecs.ts (row types and
// their mapping), plan-status.ts (status derivation), open.ts (which adapter, chosen once).
export { openStateStore, type OpenStateOptions } from './open.js';
export { openStore, type StoreOptions } from './sqlite/store.js';
export type { Store, SyncStore } from './port.js';
export type { AttemptRow, PlanWithSteps, StepRow, StoredRequest } from './rows.js';
export { IN_FLIGHT_ERROR, deriveStatus } from './plan-status.js';
export { acquireLock, lockPaths, type Lock } from './sqlite/lock.js';
export { SCHEMA_VERSION } from './sqlite/migrations.js';
export { migrationPending as sqliteMigrationPending } from './sqlite/db.js';
