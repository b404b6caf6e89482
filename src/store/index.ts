// The state store's public face: the SQLite store and the single-instance lock.
export * from './store.js';
export { acquireLock, lockPaths, type Lock, type LockHolder } from './lock.js';
export { SCHEMA_VERSION } from './migrations.js';
export { deriveStatus } from './plans.js';
