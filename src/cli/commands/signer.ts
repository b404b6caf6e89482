// `signer`: the signer service (SPEC §7), or with --check, its config, policy and keys validated.
// The config is signer.yaml (--config, else $AUTOCLAIM_SIGNER_CONFIG, else ./config/signer.yaml),
// never autoclaim's: the signer's policy is its own.
import { formatSol } from '../../amount.js';
import { formatIssue } from '../../errors.js';
import type { KeySource } from '../../domain.js';
import type { WalletSigner } from '../../keys/port.js';
import type { SignerConfig } from '../../signer/config.js';
import { redactUrl } from '../../store/postgres/db.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { untilStopAsked, writeLine } from '../io.js';

export interface SignerOptions {
  check?: boolean;
}

export function signerConfigPath(given: string | undefined, env: NodeJS.ProcessEnv): string {
  return given ?? env.AUTOCLAIM_SIGNER_CONFIG ?? './config/signer.yaml';
}

export async function signerCommand(ctx: CommandContext, configFlag: string | undefined, opts: SignerOptions): Promise<ExitCode> {
  const { io } = ctx;
  const file = signerConfigPath(configFlag, io.env);
  const { loadSignerConfig } = await import('../../signer/config.js');
  const loaded = loadSignerConfig(file, { env: io.env, cwd: io.cwd, loadKeys: { redactor: ctx.redactor } });
  for (const w of loaded.warnings) writeLine(io.stderr, `warning: ${formatIssue(w)}`);
  if (loaded.config === undefined || loaded.signers === undefined) {
    for (const e of loaded.errors) writeLine(io.stderr, formatIssue(e));
    writeLine(io.stderr, `${file}: ${loaded.errors.length} error(s); the signer config is invalid`);
    return EXIT.CONFIG;
  }
  const config = loaded.config;
  const signers = loaded.signers;
  const { closeSigners } = await import('../../keys/backends/index.js');
  try {
    // Every remote key answers and is the configured address's before anything listens (as `run`).
    const { connectSignerKeys } = await import('../../signer/config.js');
    const problems = await connectSignerKeys(config, signers);
    if (problems.length > 0) {
      for (const e of problems) writeLine(io.stderr, formatIssue(e));
      writeLine(io.stderr, `${file}: ${problems.length} key(s) do not answer or are not their address's; the signer config is invalid`);
      return EXIT.CONFIG;
    }
    if (opts.check === true) {
      writeLine(io.stdout, summary(config));
      writeLine(io.stdout, `\n${file}: valid (${config.keys.length} key(s), all load and match their address)`);
      return EXIT.OK;
    }
    return await serve(ctx, config, signers);
  } finally {
    await closeSigners(signers.values());
  }
}

async function serve(ctx: CommandContext, config: SignerConfig, signers: ReadonlyMap<string, WalletSigner>): Promise<ExitCode> {
  const { io, logger } = ctx;
  const { openSignerJournal } = await import('../../signer/journal-open.js');
  const { signerFailpointsFromEnv } = await import('../../signer/failpoints.js');
  const { createSignerHandler } = await import('../../signer/service.js');
  const { listenSigner } = await import('../../signer/server.js');
  const failpoint = signerFailpointsFromEnv(io.env);
  const journal = await openSignerJournal(config, { env: io.env, redactor: ctx.redactor, logger });
  try {
    const handler = createSignerHandler({ config, signers, journal, clock: io.clock, logger, failpoint });
    const server = await listenSigner(config.socket, handler, logger);
    logger.info({ event: 'signer.started', socket: config.socket, keys: config.keys.map((k) => k.name) }, `signer listening on ${config.socket}`);
    await untilStopAsked(io.signals);
    await server.close();
    logger.info({ event: 'signer.stopped', signed: handler.counts.signed, refused: handler.counts.refused }, 'signer stopped');
  } finally {
    await journal.close();
  }
  return EXIT.OK;
}

function summary(config: SignerConfig): string {
  const journal = config.stateUrl !== undefined ? `PostgreSQL ${redactUrl(config.stateUrl)}` : `SQLite ${config.statePath ?? ''}`;
  const lines = [`socket  ${config.socket}`, `journal ${journal}`, `max_ts_skew ${config.maxTsSkewMs / 1000}s, epochs ${config.epochs}`, 'keys:'];
  for (const k of config.keys) {
    const source = describeKey(k.key);
    const p = k.policy;
    const moves = [...p.ops].some((op) => op !== 'claim');
    const caps = moves ? `; symbols ${[...p.symbols].join(', ')}; at most ${formatSol(p.maxLamportsPerAction)} SOL an action, ${formatSol(p.maxLamportsPerDay)} SOL a day` : '';
    lines.push(`  ${k.name}  ${k.address}  (${source})  ops ${[...p.ops].join(', ')}${caps}; one claim per epoch`);
  }
  return lines.join('\n');
}

/** Which backend holds a key, and where (never a secret). */
function describeKey(key: KeySource): string {
  if ('file' in key) return `file ${key.file}`;
  if ('env' in key) return `env ${key.env}`;
  if ('credential' in key) return `credential ${key.credential}`;
  if ('pkcs11' in key) return `pkcs11 token ${key.pkcs11.token}, ${key.pkcs11.label !== undefined ? `label ${key.pkcs11.label}` : `id ${key.pkcs11.id ?? ''}`}`;
  if ('vault' in key) return `vault ${key.vault.address} ${key.vault.mount}/${key.vault.key}`;
  if ('aws_kms' in key) return `aws_kms ${key.aws_kms.keyId} in ${key.aws_kms.region}`;
  return 'signer (refused)';
}
