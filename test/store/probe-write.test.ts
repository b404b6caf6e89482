// The readiness probe: a write that would go through now, proven without leaving anything behind.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { StateError } from '../../src/errors.js';
import { freshTempDir, open } from './fixtures.js';

const tmp = freshTempDir();

describe('Store.probeWrite', () => {
  it('passes on a writable database and leaves nothing behind', () => {
    const store = open(tmp.dbPath);
    try {
      store.probeWrite();
      store.probeWrite();
    } finally {
      store.close();
    }
    const db = new Database(tmp.dbPath, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM epochs_seen').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it('fails when another connection holds the write lock', () => {
    const store = open(tmp.dbPath, { busyTimeoutMs: 0 });
    const other = new Database(tmp.dbPath);
    try {
      other.exec('BEGIN IMMEDIATE');
      expect(() => store.probeWrite()).toThrow(StateError);
      other.exec('ROLLBACK');
      store.probeWrite();
    } finally {
      other.close();
      store.close();
    }
  });

  it('fails once the database is closed', () => {
    const store = open(tmp.dbPath);
    store.close();
    expect(() => store.probeWrite()).toThrow(/closed/);
  });

  it('fails on a read-only connection', () => {
    open(tmp.dbPath).close();
    const store = open(tmp.dbPath, { readonly: true });
    try {
      expect(() => store.probeWrite()).toThrow(StateError);
    } finally {
      store.close();
    }
  });
});
