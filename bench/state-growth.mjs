// `node bench/state-growth.mjs`: what a year of history does to the SQLite state file and to the
// reads a daemon makes on it. A real state file (made by the store, every migration applied) is
// filled, day by day, with what a fleet whose rule fires once an epoch leaves behind — a plan, a
// claim and a deposit, an attempt each, a poll record and an epoch seen per wallet per day, rows of
// the sizes the sandbox's answers give — interleaved across wallets as a daemon writes them. At each
// checkpoint it times, through the store's own methods, what a turn reads (pollView, planHistory,
// lastRequestTs), what a poll writes (recordPoll), what a start and a reload read (latestRulePlans,
// unknownSteps, walletStates) and what `status` and `actions` read, and prints the file's size.
// Timings are wall clock on whatever machine runs it: notes, never a test (docs/reliability.md).
//   npm run build && node bench/state-growth.mjs [--wallets=10000] [--days=365] [--at=1,30,90,365] [--samples=2000]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DIST } from './lib/common.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const wallets = Number(arg('wallets', 10_000));
const days = Number(arg('days', 365));
const at = arg('at', '1,30,90,365').split(',').map(Number).filter((d) => d <= days);
const samples = Number(arg('samples', 2000));
const keep = process.argv.includes('--keep');

const { openStore } = await import(join(DIST, 'store/sqlite/store.js'));
const { silentLogger } = await import(join(DIST, 'log/logger.js'));

const dir = mkdtempSync(join(tmpdir(), 'autoclaim-growth-'));
const file = join(dir, 'state.db');
const DAY = 86_400_000;
const start = Date.UTC(2025, 10, 27);
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const address = (i) => {
  let s = '';
  for (let n = i * 2654435761 + 7, k = 0; k < 44; k++, n = Math.floor(n / 7) + k * 131) s += B58[n % 58];
  return s;
};
const addresses = Array.from({ length: wallets }, (_, i) => address(i));
const sig = 'Gis6TXj3xgfD7TyfJowLrjpJh2oZ32pB5cQ2Q1nnSZVbr9Qf2u4cMtSB61kyogRvduj749Ff813XYQu7rkSqZ2d';
const tx = '3oF7LUmWtgSkkymCfcMk2aiEXD16pVR1RtCZLQrVFxoR1HSo2ouNaMAGPfpbDmjA1Fw8EaVbAREBbw2HA8cnoDoA';
const epochOf = (d) => new Date(start + d * DAY).toISOString().slice(0, 10);
const summaryRaw = (a, d) =>
  JSON.stringify({ address: a, epoch: epochOf(d), pending_sol: 0.080224999, lifetime_sol: d * 0.08, rank: 1, tier: 'Bronze',
    breakdown: ['SOL2X', 'SOL5X', 'JUP2X', 'JUP5X', 'BONK2X'].map((vault) => ({ vault, volume: 32403.978, score: 32403.978 })) });

// The store makes the file (migrations, WAL); the rows go in through a second connection, in one
// transaction a day, as fast as SQLite takes them.
openStore(file, { logger: silentLogger() }).close();
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = OFF');
const ins = {
  plan: db.prepare(`INSERT INTO plans (wallet, address, rule, epoch, seq, dry, status, estimate_lamports, claimed_lamports, reason, created_at, updated_at)
    VALUES (?, ?, 'compound', ?, 0, 0, 'done', '80224999', '80444999', 'pending_sol 0.080224999 is gte 0.05; plan claim → deposit 50% of the claim into SOL2X, estimate 0.080224999 SOL', ?, ?)`),
  step: db.prepare(`INSERT INTO steps (plan_id, idx, kind, symbol, amount_spec, amount_lamports, state, attempts, request, response_status, response_raw, request_id, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, 'acknowledged', 1, ?, 200, ?, 'ea4dda9a-7a68-5dad-e5a7-6dc85fba8a79', ?, ?)`),
  attempt: db.prepare(`INSERT INTO attempts (step_id, n, request, started_at, finished_at, outcome, status, request_id)
    VALUES (?, 1, ?, ?, ?, 'acknowledged', 200, 'ea4dda9a-7a68-5dad-e5a7-6dc85fba8a79')`),
  epoch: db.prepare('INSERT INTO epochs_seen (address, epoch, first_seen_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
  state: db.prepare(`INSERT INTO wallet_state (address, wallet, last_poll_at, last_ok_at, epoch, pending_lamports, lifetime_lamports, rank, tier, summary_raw, updated_at)
    VALUES (?, ?, ?, ?, ?, '80224999', '0', 1, 'Bronze', ?, ?)
    ON CONFLICT (address) DO UPDATE SET last_poll_at = excluded.last_poll_at, epoch = excluded.epoch, summary_raw = excluded.summary_raw, updated_at = excluded.updated_at`),
};
const fillDay = db.transaction((d) => {
  const epoch = epochOf(d);
  for (let i = 0; i < wallets; i++) {
    const a = addresses[i];
    const t = start + d * DAY + Math.floor((i / wallets) * 3_600_000);
    const ts = Math.floor(t / 1000);
    ins.epoch.run(a, epoch, t);
    ins.state.run(a, `w${i}`, t, t, epoch, summaryRaw(a, d), t);
    const plan = ins.plan.run(`w${i}`, a, epoch, t, t + 300).lastInsertRowid;
    const claimReq = JSON.stringify({ method: 'POST', url: 'https://api.example/v1/rewards/claim', ts, message: `${a}|${ts}`,
      body: JSON.stringify({ wallet: a, signature: sig }), before: { pendingLamports: '80444999', lifetimeLamports: '0', epoch } });
    const depReq = JSON.stringify({ method: 'POST', url: 'https://api.example/v1/actions/deposit', ts: ts + 1, message: `${a}|SOL2X|0.040222499|${ts + 1}`,
      body: JSON.stringify({ symbol: 'SOL2X', amount: 0.040222499, wallet: a, signature: sig }) });
    const claim = ins.step.run(plan, 0, 'claim', null, null, '80444999', claimReq,
      JSON.stringify({ status: 'success', claimed_sol: 0.080556666, tx, epoch }), t, t + 100).lastInsertRowid;
    const dep = ins.step.run(plan, 1, 'deposit', 'SOL2X', '{"kind":"percent","ppm":500000}', '40222499', depReq,
      JSON.stringify({ status: 'submitted', tx, vault: 'SOL2X', queued_rebalance: true, share_mint: 'vSOL2X', estimated_shares: 9.9983 }), t, t + 300).lastInsertRowid;
    ins.attempt.run(claim, claimReq, t, t + 100);
    ins.attempt.run(dep, depReq, t + 200, t + 300);
  }
});

const quantile = (xs, q) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];
function time(label, n, fn) {
  const xs = [];
  for (let k = 0; k < n; k++) {
    const t0 = process.hrtime.bigint();
    fn(k);
    xs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  xs.sort((x, y) => x - y);
  return `${label} p50 ${quantile(xs, 0.5).toFixed(3)} p99 ${quantile(xs, 0.99).toFixed(3)} ms`;
}
const size = (p) => { try { return statSync(p).size; } catch { return 0; } };
const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;

let filled = 0;
for (const checkpoint of at) {
  const t0 = Date.now();
  while (filled < checkpoint) fillDay(filled++);
  db.pragma('wal_checkpoint(TRUNCATE)');
  const fillS = ((Date.now() - t0) / 1000).toFixed(0);
  const store = openStore(file, { logger: silentLogger(), clock: { now: () => start + filled * DAY } });
  const now = start + filled * DAY;
  const pick = (k) => addresses[(k * 7919) % wallets];
  const counts = db.prepare('SELECT (SELECT count(*) FROM plans) p, (SELECT count(*) FROM steps) s, (SELECT count(*) FROM attempts) a, (SELECT count(*) FROM epochs_seen) e').get();
  const lines = [
    `day ${filled} (${wallets} wallets; filled in ${fillS} s): file ${mib(size(file))} + wal ${mib(size(`${file}-wal`))}; rows plans ${counts.p} steps ${counts.s} attempts ${counts.a} epochs_seen ${counts.e}`,
    time('  pollView (24 h)', samples, (k) => store.pollView(pick(k), now - DAY, epochOf(filled - 1))),
    time('  pollView (30 d cooldown)', samples, (k) => store.pollView(pick(k), now - 30 * DAY, epochOf(filled - 1))),
    time('  planHistory (24 h)', samples, (k) => store.planHistory(pick(k), now - DAY, epochOf(filled - 1))),
    time('  lastRequestTs', samples, (k) => store.lastRequestTs(pick(k))),
    time('  recordPoll', samples, (k) => store.recordPoll(`w${k}`, pick(k), now + k, { ok: true, summary: { address: pick(k), epoch: epochOf(filled), pendingLamports: 1n, lifetimeLamports: 2n, rank: 1, tier: 'Bronze', breakdown: [], raw: {} } })),
    time('  listPlans (status: one wallet, 3)', samples, (k) => store.listPlans({ address: pick(k), limit: 3 })),
    time('  listPlans (actions: 100)', 20, () => store.listPlans({ limit: 100 })),
    time('  latestRulePlans (start, reload)', 5, () => store.latestRulePlans()),
    time('  unknownSteps (start)', 5, () => store.unknownSteps()),
    time('  walletStates (status)', 5, () => store.walletStates()),
  ];
  store.close();
  console.log(lines.join('\n'));
}
db.close();
if (keep) console.log(`kept ${file}`);
else rmSync(dir, { recursive: true, force: true });
