// `sandbox`: serves the local simulator of the whole API until SIGTERM/SIGINT.
import { demoSandboxOptions } from '../../sandbox/demo.js';
import { type CommandContext, UsageError } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { untilStopAsked, writeLine } from '../io.js';

export async function sandboxCommand(ctx: CommandContext, opts: { port?: string; host?: string; demoWallets?: string; epochSeconds?: string; headerPrefix?: string; claimMessage?: string }): Promise<ExitCode> {
  const { io, logger } = ctx;
  const port = opts.port === undefined ? 8787 : Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be an integer from 0 to 65535');
  const demoWallets = opts.demoWallets === undefined ? 3 : Number(opts.demoWallets);
  if (!Number.isInteger(demoWallets) || demoWallets < 0) throw new UsageError('--demo-wallets must be a non-negative integer');
  const epochSeconds = opts.epochSeconds === undefined ? 60 : Number(opts.epochSeconds);
  if (!Number.isFinite(epochSeconds) || epochSeconds <= 0) throw new UsageError('--epoch-seconds must be a positive number');
  const host = opts.host ?? '127.0.0.1';
  const apiKey = io.env.AUTOCLAIM_API_KEY;
  const { startSandbox } = await import('../../sandbox/server.js');
  const sandbox = await startSandbox({
    ...demoSandboxOptions(demoWallets),
    host,
    port,
    apiKey,
    epochMs: epochSeconds * 1000,
    // To rehearse a service that differs from autoclaim's defaults (the first day in the README).
    ...(opts.headerPrefix === undefined ? {} : { headerPrefix: opts.headerPrefix }),
    ...(opts.claimMessage === undefined ? {} : { claimMessage: opts.claimMessage }),
    clock: io.clock,
    logger,
  });
  logger.info({ event: 'sandbox.started', url: sandbox.url, auth: apiKey !== undefined }, `sandbox listening on ${sandbox.url}`);
  if (apiKey === undefined) writeLine(io.stderr, 'note: AUTOCLAIM_API_KEY is not set, so the sandbox accepts any bearer token');
  await untilStopAsked(io.signals);
  await sandbox.close();
  logger.info({ event: 'sandbox.stopped' }, 'sandbox stopped');
  return EXIT.OK;
}
