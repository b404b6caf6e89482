// Argument parsing and dispatch. Each command returns its exit code; only main.ts exits.
// A command's module, and with it what that command needs (the config pipeline, undici, SQLite,
// pino...), is imported inside its action, so `--help`, `--version` or a usage error load
// commander and this file's few imports only. The command definitions, and so the help, stay here.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { CommandContext, GlobalOptions } from './context.js';
import type { SendOptions } from './commands/send.js';
import type { SignerOptions } from './commands/signer.js';
import { Redactor } from '../log/redact.js';
import { registerEnvSecrets } from './env-secrets.js';
import { describeFailure } from './errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { writeLine, type CliIo } from './io.js';
import { UsageError } from './usage-error.js';
import { VERSION } from './version.js';

export { VERSION };

export async function main(argv: string[], io: CliIo): Promise<ExitCode> {
  let exitCode: ExitCode = EXIT.OK;
  // One Redactor for everything this run writes, commander's own errors (which quote argv)
  // included: the environment's secrets now, each command's as it loads them (context.ts).
  const redactor = registerEnvSecrets(io.redactor ?? new Redactor(), io.env);
  const redact = (text: string) => redactor.redact(text);
  const program = new Command('autoclaim')
    .description('Watches wallet rewards and claims and compounds them by YAML rules, exactly once.')
    .version(VERSION)
    .option('--config <file>', 'config file (default: $AUTOCLAIM_CONFIG, else ./config/autoclaim.yaml)', onlyOnce)
    .option('--env-file <file>', '.env file to load (never overrides variables already set)', onlyOnce)
    .addOption(new Option('--log-level <level>', 'log level').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(redact(s)), writeErr: (s) => io.stderr.write(redact(s)) });

  // Read commands log to stderr so their stdout stays clean for scripts.
  const run = (logTo: 'stdout' | 'stderr', fn: (ctx: CommandContext) => ExitCode | Promise<ExitCode>) =>
    async function (this: Command) {
      const { makeContext } = await import('./context.js');
      const ctx = makeContext(io, this.optsWithGlobals<GlobalOptions>(), logTo, redactor);
      try {
        exitCode = await fn(ctx);
      } finally {
        ctx.logger.flush();
      }
    };

  program
    .command('run')
    .description('the daemon: polls on schedule until SIGTERM/SIGINT; SIGHUP reloads the config')
    .option('--dry-run', 'decide and log everything, record plans as dry, send nothing signed')
    .action(run('stdout', async (ctx) => (await import('./commands/run.js')).runCommand(ctx, program.commands.find((c) => c.name() === 'run')!.opts())));
  program
    .command('once')
    .description('one poll → decide → act cycle for every wallet, then exit (1 if a step failed or is unknown)')
    .option('--dry-run', 'decide and log everything, record plans as dry, send nothing signed')
    .action(run('stdout', async (ctx) => (await import('./commands/run.js')).onceCommand(ctx, program.commands.find((c) => c.name() === 'once')!.opts())));
  program
    .command('check')
    .description('validate config, rules and keys; print a summary (exit 78 when invalid)')
    .action(run('stderr', async (ctx) => (await import('./commands/check.js')).checkCommand(ctx)));
  program
    .command('doctor')
    .description('first contact, GETs only: reachability, health, summaries, clock skew, keys, and the signed requests it would send (exit 1 on a problem, or a default that may not be the service\'s)')
    .option('--json', 'one JSON object')
    .option('--probe', 'also send each signed operation once, signed with a wrong key (it cannot move money), and read what the refusal says: a wrong header prefix, API key or message')
    .option('--accept-defaults', "exit 0 despite warnings about defaults (api.header_prefix) that may not be the service's")
    .action(run('stderr', async (ctx) => (await import('./commands/doctor.js')).doctorCommand(ctx, program.commands.find((c) => c.name() === 'doctor')!.opts())));
  program
    .command('status')
    .description('per wallet: last poll, epoch, pending, last actions')
    .option('--json', 'machine-readable output')
    .option('--service', "the installed systemd service's state: its unit's config, state directory and credentials (run with sudo)")
    .option('--root <dir>', 'with --service: the unit installed under this root (as `service install --root`)')
    .action(
      run('stderr', async (ctx) => {
        const opts = program.commands.find((c) => c.name() === 'status')!.opts<{ json?: boolean; service?: boolean; root?: string }>();
        if (opts.root !== undefined && opts.service !== true) throw new UsageError('--root goes with --service');
        const { statusCommand } = await import('./commands/status.js');
        if (opts.service !== true) return statusCommand(ctx, opts);
        const { serviceContext } = await import('./commands/service.js');
        return statusCommand(serviceContext(ctx, { root: opts.root, configGiven: program.commands.find((c) => c.name() === 'status')!.optsWithGlobals<GlobalOptions>().config !== undefined }), opts);
      }),
    );
  program
    .command('pause')
    .description('the kill switch on a running daemon (and any started later): polls and decides (dry) on, signs nothing; recorded with who and when')
    .option('--reason <text>', 'why, for the record')
    .action(run('stderr', async (ctx) => (await import('./commands/control.js')).pauseCommand(ctx, program.commands.find((c) => c.name() === 'pause')!.opts())));
  program
    .command('resume')
    .description("lift `autoclaim pause` (not the config's safety.paused: exit 1 while that holds)")
    .action(run('stderr', async (ctx) => (await import('./commands/control.js')).resumeCommand(ctx)));
  program
    .command('poll')
    .description('ask the running daemon to poll now (every wallet, --wallet NAME, or --paused); exit 1 when no daemon runs')
    .option('--wallet <name...>', 'only these wallets')
    .option('--paused', 'only the wallets signing is paused for')
    .action(run('stderr', async (ctx) => (await import('./commands/control.js')).pollCommand(ctx, program.commands.find((c) => c.name() === 'poll')!.opts())));
  const actions = program
    .command('actions')
    .description('the recorded plans and steps')
    .option('--json', 'machine-readable output')
    .addOption(new Option('--state <state>', 'only steps in this state').choices(['planned', 'sending', 'acknowledged', 'rejected', 'failed', 'unknown', 'skipped']))
    .option('--limit <n>', 'at most this many plans', '50')
    .action(run('stderr', async (ctx) => (await import('./commands/actions.js')).actionsCommand(ctx, actions.opts())));
  actions
    .command('resolve <id>')
    .description('settle an unknown step after checking on chain: --applied or --not-applied')
    .option('--applied', 'the action took effect')
    .option('--not-applied', 'the action did not take effect (it will not be re-sent automatically)')
    .option('--note <text>', 'why, for the record')
    .option('--force', 'with --not-applied: before api.claim_settle has passed since it was signed (you know the service refused it or never got it)')
    .action(async function (this: Command, id: string) {
      const opts = this.opts<{ applied?: boolean; notApplied?: boolean; note?: string; force?: boolean }>();
      await run('stderr', async (ctx) => (await import('./commands/actions.js')).resolveCommand(ctx, id, opts)).call(this);
    });
  program
    .command('prune')
    .description("delete the state file's settled history older than --older-than, never what the exactly-once guards read (exit 75 while a daemon runs on it)")
    .requiredOption('--older-than <duration>', 'only history recorded before this long ago, e.g. 180d (at least the rules\' day or longest cooldown)', onlyOnce)
    .option('--dry-run', 'count what would be deleted; delete nothing')
    .action(run('stderr', async (ctx) => (await import('./commands/prune.js')).pruneCommand(ctx, program.commands.find((c) => c.name() === 'prune')!.opts())));
  program
    .command('send [op]')
    .description('one action you decide (claim, deposit, mint, withdraw, burn) through the journal and safety caps, exactly once per --id')
    .option('--wallet <name>', 'the configured wallet to act for', onlyOnce)
    .option('--symbol <symbol>', 'vault or token symbol (not for claim)', onlyOnce)
    .option('--amount <n>', 'amount in SOL (a withdraw: vault shares; a burn: tokens), e.g. 1.5 (not for claim)', onlyOnce)
    .option('--id <id>', 'your id for this action: the same id never sends twice', onlyOnce)
    .option('--yes', 'do not ask for confirmation (required when not on a terminal)')
    .option('--dry-run', 'say what would be sent; record and send nothing')
    .option('--wait <duration>', 'with shared state (state.url): how long to wait for the daemon holding the wallet to send it', '2m')
    .option('--cancel', 'with --id only: cancel that queued action before any daemon sends it (refused once it may be on the wire)')
    .action(async function (this: Command, op: string | undefined) {
      const opts = this.opts<SendOptions>();
      await run('stdout', async (ctx) => (await import('./commands/send.js')).sendCommand(ctx, op, opts)).call(this);
    });
  program
    .command('leaderboard')
    .description('read the leaderboard')
    .option('--limit <n>', 'how many entries', '10')
    .option('--json', 'print what the server sent')
    .action(run('stderr', async (ctx) => (await import('./commands/read.js')).leaderboardCommand(ctx, program.commands.find((c) => c.name() === 'leaderboard')!.opts())));
  program
    .command('wallet <address>')
    .description('read one wallet summary')
    .option('--json', 'print what the server sent')
    .action(async function (this: Command, address: string) {
      const opts = this.opts<{ json?: boolean }>();
      await run('stderr', async (ctx) => (await import('./commands/read.js')).walletCommand(ctx, address, opts)).call(this);
    });
  program
    .command('sandbox')
    .description('serve a local simulator of the whole API')
    .option('--port <port>', 'port (0 = any free one)', '8787')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--demo-wallets <n>', 'deterministic demo wallets to create', '3')
    .option('--epoch-seconds <s>', 'epoch length in seconds', '60')
    .option('--header-prefix <prefix>', 'the prefix of its signed-request headers (x-<prefix>-ts), to rehearse a service that is not autoclaim\'s default', 'x-svc')
    .option('--claim-message <template>', 'the claim message it verifies, e.g. "claim:{wallet}:{ts}" (default: {wallet}|{ts})')
    .action(run('stdout', async (ctx) => (await import('./commands/sandbox.js')).sandboxCommand(ctx, program.commands.find((c) => c.name() === 'sandbox')!.opts())));
  program
    .command('key <source>')
    .description('print the wallet address of a key file, env:NAME or credential:NAME')
    .action(async function (this: Command, source: string) {
      await run('stderr', async (ctx) => (await import('./commands/key.js')).keyCommand(ctx, source)).call(this);
    });
  const signer = program
    .command('signer')
    .description('the signer service: holds wallet keys, signs only what its own policy (signer.yaml) allows, over a unix socket')
    .option('--check', 'validate signer.yaml, its policy and its keys, then exit (78 when invalid)')
    .action(async function (this: Command) {
      const opts = signer.opts<SignerOptions>();
      const configFlag = this.optsWithGlobals<GlobalOptions>().config;
      await run(opts.check === true ? 'stderr' : 'stdout', async (ctx) => (await import('./commands/signer.js')).signerCommand(ctx, configFlag, opts)).call(this);
    });
  signer
    .command('prune')
    .description("delete the signer journal's signatures made before --older-than (at least 3d), beside running signers; the newest is kept")
    .requiredOption('--older-than <duration>', 'only signatures made before this long ago, e.g. 90d', onlyOnce)
    .option('--dry-run', 'count what would be deleted; delete nothing')
    .action(async function (this: Command) {
      const opts = this.opts<{ olderThan: string; dryRun?: boolean }>();
      const configFlag = this.optsWithGlobals<GlobalOptions>().config;
      await run('stderr', async (ctx) => (await import('./commands/signer-prune.js')).signerPruneCommand(ctx, configFlag, opts)).call(this);
    });
  const service = program.command('service').description('the systemd service: `service install` writes its unit, directories and a config skeleton');
  service
    .command('install')
    .description('write /etc/systemd/system/autoclaim.service (running this package), /etc/autoclaim/ and a config skeleton (an existing config is kept); safe to run again')
    .option('--user <name>', 'run as this fixed account instead of a DynamicUser=yes one')
    .option('--root <dir>', 'write under this directory instead of / (as systemctl --root)')
    .action(async function (this: Command) {
      const opts = this.opts<{ user?: string; root?: string }>();
      const { serviceInstallCommand } = await import('./commands/service.js');
      exitCode = serviceInstallCommand(io, opts);
    });
  program
    .command('schema')
    .description('print the JSON Schema of the config file')
    .action(async () => {
      const { schemaCommand } = await import('./commands/schema.js');
      exitCode = schemaCommand(io);
    });

  try {
    if (argv.length === 0) {
      program.outputHelp({ error: true });
      return EXIT.USAGE;
    }
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.OK;
      return EXIT.USAGE;
    }
    if (err instanceof UsageError) {
      writeLine(io.stderr, `autoclaim: ${redact(err.message)}`);
      return EXIT.USAGE;
    }
    // A failure's message may quote what a secret was registered as: scrubbed before it is cut into lines.
    const { code, lines } = describeFailure(err, redact);
    for (const l of lines) writeLine(io.stderr, `autoclaim: ${l}`);
    return code;
  }
}

/**
 * What `send` moves, and which config runs, is given once: `--amount 100 … --amount 1000` (a line
 * edited, a script's default and its override) would send the last one, which commander takes
 * without a word.
 */
function onlyOnce(value: string, previous: string | undefined): string {
  if (previous !== undefined) throw new InvalidArgumentError('given more than once; give it once');
  return value;
}
