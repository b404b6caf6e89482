// `status`: per wallet, the last poll, epoch, pending and the last actions. Before the first poll
// (no state file yet, or one with no poll in it) it says "no polls yet" and exits 0: a fresh
// install is not a failure.
import { formatSol } from '../../amount.js';
import { toJson } from '../../json.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { table } from '../table.js';
import { openStateIfAny } from './state-access.js';

export async function statusCommand(ctx: CommandContext, opts: { json?: boolean }): Promise<ExitCode> {
  const { config, store } = await openStateIfAny(ctx, { write: false });
  try {
    const states = new Map(((await store?.walletStates()) ?? []).map((s) => [s.address, s]));
    const rows = [];
    for (const w of config.wallets) {
      const s = states.get(w.address);
      const plans = (await store?.listPlans({ address: w.address, limit: 3 })) ?? [];
      rows.push({
        wallet: w.name,
        address: w.address,
        lastPollAt: s?.lastPollAt ?? null,
        lastOkAt: s?.lastOkAt ?? null,
        lastError: s?.lastError ?? null,
        epoch: s?.epoch ?? null,
        pendingSol: s?.pendingLamports == null ? null : formatSol(s.pendingLamports),
        lifetimeSol: s?.lifetimeLamports == null ? null : formatSol(s.lifetimeLamports),
        rank: s?.rank ?? null,
        tier: s?.tier ?? null,
        unknownSteps: plans.flatMap((p) => p.steps).filter((st) => st.state === 'unknown').map((st) => st.id),
        lastActions: plans.map((p) => ({
          plan: p.id,
          rule: p.rule,
          epoch: p.epoch,
          status: p.status,
          dry: p.dry,
          createdAt: new Date(p.createdAt).toISOString(),
          steps: p.steps.map((st) => ({ id: st.id, kind: st.kind, state: st.state, amountSol: st.amountLamports === null ? null : formatSol(st.amountLamports) })),
        })),
      });
    }
    const polled = rows.some((r) => r.lastPollAt !== null);
    const none =
      store === undefined
        ? `no polls yet: no state file at ${config.state.path} (the daemon has not run with this config)`
        : 'no polls yet: the daemon has not polled any of these wallets';
    if (opts.json === true) {
      writeLine(ctx.io.stdout, toJson(polled ? { wallets: rows } : { wallets: rows, note: none }));
      return EXIT.OK;
    }
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString().replace('.000Z', 'Z'));
    writeLine(
      ctx.io.stdout,
      table(
        ['wallet', 'last poll', 'epoch', 'pending SOL', 'lifetime SOL', 'rank', 'last action'],
        rows.map((r) => {
          const a = r.lastActions[0];
          const last = a === undefined ? null : `#${a.plan} ${a.rule} ${a.status}${a.dry ? ' (dry)' : ''}`;
          return [r.wallet, r.lastError !== null && r.lastOkAt !== r.lastPollAt ? `${iso(r.lastPollAt)} FAILED` : iso(r.lastPollAt), r.epoch, r.pendingSol, r.lifetimeSol, r.rank, last];
        }),
      ),
    );
    if (!polled) writeLine(ctx.io.stdout, `\n${none}`);
    const unknown = rows.flatMap((r) => r.unknownSteps);
    if (unknown.length > 0) writeLine(ctx.io.stdout, `\n${unknown.length} step(s) unknown: see \`autoclaim actions --state unknown\``);
    return EXIT.OK;
  } finally {
    await store?.close();
  }
}
