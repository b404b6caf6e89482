// `status`: per wallet, the last poll, epoch, pending and the last actions. Before the first poll
// (no state file yet, or one with no poll in it) it says "no polls yet" and exits 0: a fresh
// install is not a failure. On shared PostgreSQL state (state.url) it also says who works each
// wallet: the lease's owner (daemon id, host, pid) and expiry, and the live daemons.
import { formatSol, type Lamports } from '../../amount.js';
import { inSol, unitsOf } from '../../rules/amounts.js';
import type { StepRow } from '../../store/index.js';
import type { DaemonRow, LeaseRow } from '../../cluster/sql.js';
import { toJson } from '../../json.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { table } from '../table.js';
import { openStateIfAny, readClusterView } from './state-access.js';
import { signingLines, signingStatus } from './status-signing.js';

export async function statusCommand(ctx: CommandContext, opts: { json?: boolean }): Promise<ExitCode> {
  const { config, store } = await openStateIfAny(ctx, { write: false });
  try {
    const cluster = store === undefined ? undefined : await readClusterView(ctx, config);
    const leases = new Map((cluster?.leases ?? []).map((l) => [l.address, l]));
    const daemons = new Map((cluster?.daemons ?? []).map((d) => [d.id, d]));
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
          steps: p.steps.map((st) => ({ id: st.id, kind: st.kind, state: st.state, ...stepAmount(st, p.claimedLamports) })),
        })),
        // Only on shared state, so a single host's output does not change.
        ...(cluster === undefined ? {} : { lease: leaseOf(leases.get(w.address), daemons) }),
      });
    }
    const polled = rows.some((r) => r.lastPollAt !== null);
    const none =
      store === undefined
        ? config.state.url === undefined
          ? `no polls yet: no state file at ${config.state.path} (the daemon has not run with this config)`
          : 'no polls yet: no autoclaim state in the database at state.url (no daemon has run with it)'
        : 'no polls yet: the daemon has not polled any of these wallets';
    const live = cluster === undefined ? undefined : { daemons: cluster.daemons.filter((d) => d.live).map(daemonOf) };
    const signing = signingStatus(config, ctx.io.clock.now());
    if (opts.json === true) {
      writeLine(ctx.io.stdout, toJson({ wallets: rows, signing, ...(live === undefined ? {} : { cluster: live }), ...(polled ? {} : { note: none }) }));
      return EXIT.OK;
    }
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString().replace('.000Z', 'Z'));
    const head = ['wallet', 'last poll', 'epoch', 'pending SOL', 'lifetime SOL', 'rank', 'last action'];
    writeLine(
      ctx.io.stdout,
      table(
        live === undefined ? head : [...head, 'owner', 'lease until'],
        rows.map((r) => {
          const a = r.lastActions[0];
          const last = a === undefined ? null : `#${a.plan} ${a.rule} ${a.status}${a.dry ? ' (dry)' : ''}`;
          const cells = [r.wallet, r.lastError !== null && r.lastOkAt !== r.lastPollAt ? `${iso(r.lastPollAt)} FAILED` : iso(r.lastPollAt), r.epoch, r.pendingSol, r.lifetimeSol, r.rank, last];
          if (live === undefined) return cells;
          const l = r.lease;
          return [...cells, l == null ? null : l.owner, l == null ? null : `${l.expiresAt.replace('.000Z', 'Z')}${l.valid ? '' : ' (expired)'}`];
        }),
      ),
    );
    if (live !== undefined) {
      const list = live.daemons.map((d) => `${d.id} (host ${d.host}, pid ${d.pid})`);
      writeLine(ctx.io.stdout, `\n${list.length} live daemon(s)${list.length > 0 ? `: ${list.join(', ')}` : ''}`);
    }
    writeLine(ctx.io.stdout, `\n${signingLines(signing).join('\n')}`);
    if (!polled) writeLine(ctx.io.stdout, `\n${none}`);
    const unknown = rows.flatMap((r) => r.unknownSteps);
    if (unknown.length > 0) writeLine(ctx.io.stdout, `\n${unknown.length} step(s) unknown: see \`autoclaim actions --state unknown\``);
    return EXIT.OK;
  } finally {
    await store?.close();
  }
}

/** A wallet's lease as status shows it; null when no daemon has it (free, or never taken). */
function leaseOf(l: LeaseRow | undefined, daemons: ReadonlyMap<string, DaemonRow>): StatusLease | null {
  if (l?.owner === undefined) return null;
  const d = daemons.get(l.owner);
  return {
    owner: l.owner,
    // The owner's row may already be gone (reaped, or it left) while an expired lease still names it.
    host: d?.host ?? null,
    pid: d?.pid ?? null,
    expiresAt: new Date(l.expiresAt).toISOString(),
    // false: it lapsed by the database's clock, and the next daemon to tick takes the wallet.
    valid: l.valid,
    token: l.token.toString(),
  };
}

interface StatusLease {
  owner: string;
  host: string | null;
  pid: number | null;
  expiresAt: string;
  valid: boolean;
  token: string;
}

function daemonOf(d: DaemonRow): { id: string; host: string; pid: number; startedAt: string; heartbeatAt: string; expiresAt: string } {
  const iso = (ms: number) => new Date(ms).toISOString();
  return { id: d.id, host: d.host, pid: d.pid, startedAt: iso(d.startedAt), heartbeatAt: iso(d.heartbeatAt), expiresAt: iso(d.expiresAt) };
}

/**
 * A step's amount in its unit, as the logs give it (amountFields): SOL as `amountSol` (a claim, a
 * deposit, a mint); a withdraw's vault shares and a burn's tokens as `amountUnits` with their
 * `unit`, never `amountSol`, which a script would sum as SOL. Null until the amount is known
 * (a claim's: until what it claimed is).
 */
function stepAmount(st: Pick<StepRow, 'kind' | 'symbol' | 'amountLamports'>, claimed: Lamports | null): { amountSol: string | null } | { amountUnits: string | null; unit: string } {
  // A claim's amount is the plan's: what it counts as having claimed (as `actions` shows it).
  const lamports = st.kind === 'claim' ? (st.amountLamports ?? claimed) : st.amountLamports;
  const amount = lamports === null ? null : formatSol(lamports);
  if (inSol(st.kind)) return { amountSol: amount };
  return { amountUnits: amount, unit: unitsOf(st) };
}
