// `signer`: the signer service (SPEC §7), or with --check, its config, policy and keys validated.
// The config is signer.yaml (--config, else $AUTOCLAIM_SIGNER_CONFIG, else ./config/signer.yaml),
// never autoclaim's: the signer's policy is its own.
import { formatSol } from '../../amount.js';
import { formatIssue } from '../../errors.js';
import type { SignerConfig } from '../../signer/config.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';

export interface SignerOptions {
  check?: boolean;
}

export function signerConfigPath(given: string | undefined, env: NodeJS.ProcessEnv): string {
  return given ?? env.AUTOCLAIM_SIGNER_CONFIG ?? './config/signer.yaml';
}

export async function signerCommand(ctx: CommandContext, configFlag: string | undefined, opts: SignerOptions): Promise<ExitCode> {
  const { io, logger } = ctx;
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
  if (opts.check === true) {
    writeLine(io.stdout, summary(config));
    writeLine(io.stdout, `\n${file}: valid (${config.keys.length} key(s), all load and match their address)`);
    return EXIT.OK;
  }
  const { SqliteJournal } = await import('../../signer/journal.js');
  const { signerFailpointsFromEnv } = await import('../../signer/failpoints.js');
  const { createSignerHandler } = await import('../../signer/service.js');
  const { listenSigner } = await import('../../signer/server.js');
  const failpoint = signerFailpointsFromEnv(io.env);
  const journal = SqliteJournal.open(config.statePath);
  try {
    const handler = createSignerHandler({ config, signers: loaded.signers, journal, clock: io.clock, logger, failpoint });
    const server = await listenSigner(config.socket, handler, logger);
    logger.info({ event: 'signer.started', socket: config.socket, keys: config.keys.map((k) => k.name) }, `signer listening on ${config.socket}`);
    await new Promise<void>((resolve) => {
      const stop = () => {
        io.signals.off('SIGTERM', stop);
        io.signals.off('SIGINT', stop);
        resolve();
      };
      io.signals.on('SIGTERM', stop);
      io.signals.on('SIGINT', stop);
    });
    await server.close();
    logger.info({ event: 'signer.stopped', signed: handler.counts.signed, refused: handler.counts.refused }, 'signer stopped');
  } finally {
    journal.close();
  }
  return EXIT.OK;
}

function summary(config: SignerConfig): string {
  const lines = [`socket  ${config.socket}`, `journal ${config.statePath}`, `max_ts_skew ${config.maxTsSkewMs / 1000}s, epochs ${config.epochs}`, 'keys:'];
  for (const k of config.keys) {
    const source = 'file' in k.key ? `file ${k.key.file}` : 'env' in k.key ? `env ${k.key.env}` : `credential ${k.key.credential}`;
    const p = k.policy;
    const moves = [...p.ops].some((op) => op !== 'claim');
    const caps = moves ? `; symbols ${[...p.symbols].join(', ')}; at most ${formatSol(p.maxLamportsPerAction)} SOL an action, ${formatSol(p.maxLamportsPerDay)} SOL a day` : '';
    lines.push(`  ${k.name}  ${k.address}  (${source})  ops ${[...p.ops].join(', ')}${caps}; one claim per epoch`);
  }
  return lines.join('\n');
}
