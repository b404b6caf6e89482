// Issue 24, finding 7, through real daemon processes against the sandbox: the lock file deleted
// under a running `run` used to let a second `run` start on the same state, and both signed from
// one journal. The lock is now checked like the database (identity.ts): the first daemon signs
// nothing more once its lock file is gone. What is achieved, and asserted: a second `run` does start
// (it locks a new file; nothing on this host can tell it of the first), and it is then the only one
// that signs: a fixed deposit goes out once, never twice.
import { rmSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildOnce } from '../e2e/build.js';
import { spawnCli, type Child } from '../e2e/helpers.js';
import { crashWorld, SOL, type CrashWorld } from './crash-harness.js';

const FIXED_DEPOSIT = `  - name: fixed
    when: { pending_sol: { gte: 0.5 } }
    do: [{ deposit: { symbol: SOL2X, amount: 0.25 } }]
`;

beforeAll(() => buildOnce(), 120_000);

const worlds: CrashWorld[] = [];
const children: Child[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await c.stop();
  for (const w of worlds.splice(0)) await w.close();
});

describe('the state lock deleted under a running daemon', () => {
  it('the first daemon signs nothing more (state.replaced, role lock); the deposit goes out once', async () => {
    const w = await crashWorld({ names: ['alpha'], rules: FIXED_DEPOSIT, pendingLamports: 0n });
    worlds.push(w);
    w.sandbox.world.setWallet(w.wallets[0]!.address, { balanceLamports: 1n * SOL });
    const first = spawnCli(['run', '--config', w.config], { cwd: w.dir });
    children.push(first);
    await first.waitFor((e) => e.event === 'poll.ok');
    rmSync(`${w.statePath}.lock`);
    w.sandbox.world.setWallet(w.wallets[0]!.address, { pendingLamports: 1n * SOL });

    // The rule fires in the first daemon: it records the plan, and refuses to record `sending`.
    expect(await first.waitFor((e) => e.event === 'state.replaced')).toMatchObject({ level: 'error', role: 'lock', how: 'deleted' });
    await first.waitFor((e) => e.event === 'state.write_failed');
    expect(first.events().some((e) => e.event === 'action.sent')).toBe(false);
    expect(w.sandbox.ledger()).toEqual([]);

    // A second `run` is not refused (it locks a new file); it finds the plan and sends it, once.
    const second = spawnCli(['run', '--config', w.config], { cwd: w.dir });
    children.push(second);
    await second.waitFor((e) => e.event === 'action.acknowledged' && e.kind === 'deposit');
    const seen = first.events().length;
    await first.waitFor((e, i) => e.event === 'poll.ok' && i >= seen);
    expect(first.events().some((e) => e.event === 'action.sent')).toBe(false);
    expect(w.sandbox.ledger().filter((e) => e.op === 'deposit')).toHaveLength(1);
    for (const d of [first, second]) d.proc.kill('SIGTERM');
    await Promise.all([first.exited, second.exited]);
  });
});
