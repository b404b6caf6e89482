// The sandbox in its own process (forked with IPC), so the client under test and the server do
// not share an event loop. The parent sends commands; every reply carries the command's id.
//   start {options}  → {url, caFile}      stats → StatsSnapshot      resetStats
//                       (options.tls: HTTPS in front, tls-front.mjs; caFile is its certificate)
//   trace {threshold} → starts recording, per wallet, when a summary over the threshold was served
//                       and when its claim request arrived and was applied (performance.now())
//   traceGet → {samples: [arrival ms], applied: [applied ms], claims}      arrivals → {times: [epoch ms] of API requests, first}   close
import http from 'node:http';
import { join } from 'node:path';

const DIST = join(import.meta.dirname, '../../dist');

// When a claim request arrives (headers read), before the sandbox checks its signature (tweetnacl,
// several ms): hooked at the http server's 'request' event, so the sandbox itself is untouched.
const claimArrivals = new Map();
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, ...rest) {
  if (event === 'request' && req.method === 'POST' && req.url?.endsWith('/rewards/claim')) {
    const wallet = req.headers['x-svc-wallet'];
    if (typeof wallet === 'string') claimArrivals.set(wallet, performance.now());
  }
  return emit.call(this, event, req, ...rest);
};
const { startSandbox } = await import(join(DIST, 'sandbox/server.js'));
const { startTlsFront } = await import('./tls-front.mjs');

let sandbox;
let front;
let traceThreshold;
const firstOver = new Map();
const latencies = [];
const thresholds = new Map();
const crossings = [];
const applied = [];
const arrivals = [];
let recordArrivals = false;

function hydrate(options) {
  // bigints cannot cross IPC as JSON: they travel as strings.
  const big = (v) => (v === undefined ? undefined : BigInt(v));
  return {
    ...options,
    defaultAccrualLamportsPerSec: big(options.defaultAccrualLamportsPerSec),
    wallets: options.wallets?.map((w) => ({
      address: w.address,
      pendingLamports: big(w.pendingLamports),
      accrualLamportsPerSec: big(w.accrualLamportsPerSec),
      balanceLamports: big(w.balanceLamports),
    })),
  };
}

function instrument(world) {
  const summary = world.summary.bind(world);
  const claim = world.claim.bind(world);
  world.summary = (address) => {
    if (recordArrivals) arrivals.push(performance.timeOrigin + performance.now());
    const s = summary(address);
    if (traceThreshold !== undefined && s.pendingLamports >= traceThreshold && !firstOver.has(address)) firstOver.set(address, performance.now());
    return s;
  };
  world.claim = (address, signature) => {
    if (recordArrivals) arrivals.push(performance.timeOrigin + performance.now());
    const entry = claim(address, signature);
    // Crossing → claim: with linear accrual, the claimed amount says when the threshold was crossed.
    const threshold = thresholds.get(address);
    const rate = world.wallet(address)?.accrualLamportsPerSec ?? 0n;
    if (threshold !== undefined && rate > 0n && entry.amountLamports >= threshold) {
      crossings.push(Number(((entry.amountLamports - threshold) * 1_000_000n) / rate) / 1000);
    }
    const t0 = firstOver.get(address);
    const arrived = claimArrivals.get(address);
    if (t0 !== undefined && arrived !== undefined) {
      latencies.push(arrived - t0);
      applied.push(performance.now() - t0);
      firstOver.delete(address);
    }
    return entry;
  };
}

process.on('message', async (msg) => {
  const reply = (body) => process.send({ id: msg.id, ...body });
  try {
    switch (msg.cmd) {
      case 'start': {
        const { tls, ...options } = msg.options;
        sandbox = await startSandbox(hydrate(options));
        instrument(sandbox.world);
        if (!tls) return reply({ url: sandbox.url });
        const { origin, pathname } = new URL(sandbox.url);
        front = await startTlsFront(origin);
        return reply({ url: `${front.origin}${pathname}`, caFile: front.caFile });
      }
      case 'cpu': {
        const u = process.cpuUsage();
        return reply({ cpuMs: (u.user + u.system) / 1000 });
      }
      case 'stats':
        return reply({ stats: { ...sandbox.stats(), ...(front ? { tlsConnections: front.connections() } : {}) } });
      case 'resetStats':
        sandbox.resetStats();
        front?.connections({ reset: true });
        return reply({});
      case 'trace':
        traceThreshold = BigInt(msg.threshold);
        firstOver.clear();
        latencies.length = 0;
        applied.length = 0;
        return reply({});
      case 'thresholds':
        for (const [address, lamports] of msg.thresholds) thresholds.set(address, BigInt(lamports));
        crossings.length = 0;
        return reply({});
      case 'crossings':
        return reply({ delaysMs: crossings.splice(0) });
      case 'traceGet':
        return reply({ samples: [...latencies], applied: [...applied], claims: sandbox.ledger().filter((e) => e.op === 'claim').length });
      case 'arrivals':
        recordArrivals = msg.on ?? recordArrivals;
        return reply({ times: msg.take ? arrivals.splice(0) : [], first: arrivals[0] });
      case 'close':
        await front?.close();
        await sandbox?.close();
        reply({});
        return process.exit(0);
      default:
        return reply({ error: `unknown command ${msg.cmd}` });
    }
  } catch (err) {
    reply({ error: String(err?.stack ?? err) });
  }
});
process.send({ ready: true });
