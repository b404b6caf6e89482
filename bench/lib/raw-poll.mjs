// The baseline: a plain undici script doing the GETs one `once` cycle does, at the same
// concurrency, over the same connection settings, and parsing each body as JSON. No keys, no
// database, no rules, no logging: what autoclaim's poll cycle would cost if autoclaim cost nothing.
//   node raw-poll.mjs BASE_URL WALLETS_JSON CONCURRENCY CONNECTIONS
import { readFileSync } from 'node:fs';
import { Agent } from 'undici';

const [baseUrl, walletsFile, concurrencyArg, connectionsArg] = process.argv.slice(2);
const wallets = JSON.parse(readFileSync(walletsFile, 'utf8'));
const concurrency = Number(concurrencyArg);
const agent = new Agent({ connections: Number(connectionsArg), pipelining: 1, keepAliveTimeout: 4_000 });
const origin = new URL(baseUrl).origin;
const base = new URL(baseUrl).pathname.replace(/\/+$/, '');
const headers = { accept: 'application/json', 'user-agent': 'raw-bench', authorization: `Bearer ${process.env.AUTOCLAIM_API_KEY ?? ''}` };

let next = 0;
let ok = 0;
async function worker() {
  while (next < wallets.length) {
    const w = wallets[next++];
    const res = await agent.request({ origin, path: `${base}/rewards/wallet/${encodeURIComponent(w.address)}`, method: 'GET', headers });
    const body = await res.body.json();
    if (res.statusCode === 200 && body.address === w.address) ok++;
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
await agent.close();
process.stdout.write(`${JSON.stringify({ event: 'raw.done', ok, total: wallets.length })}\n`);
process.exitCode = ok === wallets.length ? 0 : 1;
