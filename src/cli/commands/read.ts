// `leaderboard` and `wallet`: read-only views of the API. --json prints what the server sent,
// numbers byte-for-byte (lossless), after it passed the response schema.
import { formatSol } from '../../amount.js';
import { stringifyLossless } from '../../api/json.js';
import { loadValidConfig, openApi } from '../../runtime.js';
import { type CommandContext, UsageError } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { table } from '../table.js';
import { terminalText } from '../terminal-text.js';

async function withApi<T>(ctx: CommandContext, fn: (api: Awaited<ReturnType<typeof openApi>>) => Promise<T>): Promise<T> {
  const config = loadValidConfig(ctx.configPath, ctx.io.env, ctx.io.cwd);
  const api = await openApi(config, { env: ctx.io.env, clock: ctx.io.clock, logger: ctx.logger, redactor: ctx.redactor });
  try {
    return await fn(api);
  } finally {
    await api.close();
  }
}

export async function leaderboardCommand(ctx: CommandContext, opts: { limit?: string; json?: boolean }): Promise<ExitCode> {
  const limit = opts.limit === undefined ? 10 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be an integer from 1 to 1000');
  return withApi(ctx, async (api) => {
    const board = await api.client.leaderboard(limit);
    if (opts.json === true) {
      writeLine(ctx.io.stdout, stringifyLossless(board.raw));
    } else {
      writeLine(
        ctx.io.stdout,
        table(
          ['rank', 'address', 'score', 'total rewards SOL'],
          board.entries.map((e) => [e.rank, e.address, e.score, e.totalRewardsLamports === null ? null : formatSol(e.totalRewardsLamports)]),
        ),
      );
    }
    return EXIT.OK;
  });
}

export async function walletCommand(ctx: CommandContext, address: string, opts: { json?: boolean }): Promise<ExitCode> {
  return withApi(ctx, async (api) => {
    const s = await api.client.walletSummary(address);
    if (opts.json === true) {
      writeLine(ctx.io.stdout, stringifyLossless(s.raw));
      return EXIT.OK;
    }
    const lines = [
      `address       ${terminalText(s.address)}`,
      `epoch         ${terminalText(s.epoch)}`,
      `pending SOL   ${formatSol(s.pendingLamports)}`,
      `lifetime SOL  ${s.lifetimeLamports === null ? '-' : formatSol(s.lifetimeLamports)}`,
      `rank          ${s.rank ?? '-'}`,
      `tier          ${terminalText(s.tier ?? '-')}`,
    ];
    writeLine(ctx.io.stdout, lines.join('\n'));
    if (s.breakdown.length > 0) {
      writeLine(ctx.io.stdout, '\n' + table(['vault', 'volume', 'score'], s.breakdown.map((b) => [b.vault, b.volume, b.score])));
    }
    return EXIT.OK;
  });
}
