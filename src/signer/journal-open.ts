// Which journal signer.yaml names: SQLite (`state.path`, one machine) or PostgreSQL (`state.url`, a
// cluster's signers sharing caps). The PostgreSQL password is read as the daemon reads its own
// (PGPASSWORD, state.password_file, the credential state_password) and registered for redaction;
// the driver is loaded only for a PostgreSQL journal.
import { resolvePostgresPassword } from '../config/secrets.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import type { SignerConfig } from './config.js';
import type { SignerJournal } from './journal.js';

export interface OpenJournalOptions {
  env: NodeJS.ProcessEnv;
  redactor: Redactor;
  logger: Logger;
}

export async function openSignerJournal(config: SignerConfig, opts: OpenJournalOptions): Promise<SignerJournal> {
  if (config.stateUrl === undefined) {
    const { SqliteJournal } = await import('./journal.js');
    return SqliteJournal.open(config.statePath ?? '');
  }
  const password = resolvePostgresPassword(config.statePasswordFile, opts.env, { credentialsDir: opts.env.CREDENTIALS_DIRECTORY });
  opts.redactor.add(password);
  const { PostgresJournal } = await import('./journal-postgres.js');
  return PostgresJournal.open(config.stateUrl, {
    ...(password !== undefined ? { password } : {}),
    queryTimeoutMs: config.queryTimeoutMs,
    ...(config.stateMarkFile !== undefined ? { markFile: config.stateMarkFile } : {}),
    // A connection that fails is replaced by the pool; the batch that met it answers SIGNER_UNAVAILABLE.
    onConnectionError: (err) => opts.logger.warn({ event: 'signer.journal_failed', err }, 'a connection to the signer journal failed'),
  });
}
