// The client's dispatcher loads undici's Agent without the rest of undici (fetch, WebSocket, the
// cache, mocks, the request and stream APIs: ~6 MB of RSS). Checked in a fresh process on the
// built code: the lean path is taken with the undici this project pins (an upgrade that moves that
// file falls back to the whole package, and this says so), and an exchange through it works.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { buildOnce } from '../e2e/build.js';
import { REPO } from '../e2e/helpers.js';

beforeAll(() => buildOnce());

it('takes the lean path, loads no more of undici than it needs, and a request goes through', () => {
  const script = `
    import { createServer } from 'node:http';
    import { createRequire } from 'node:module';
    const { createDispatcher, undiciAgent } = await import(${JSON.stringify(join(REPO, 'dist/api/dispatcher.js'))});
    const { exchange } = await import(${JSON.stringify(join(REPO, 'dist/api/exchange.js'))});
    const server = createServer((_req, res) => res.end('{"ok":true}'));
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const d = createDispatcher({ connectTimeoutMs: 1000, timeoutMs: 2000, connections: 1, maxResponseBytes: 1024 });
    const res = await exchange(d, { origin: 'http://127.0.0.1:' + server.address().port, path: '/', method: 'GET' }, { timeoutMs: 2000, max: 1024 }).answer;
    const body = res.body.toString();
    const requestApi = typeof d.request === 'function';
    await d.close();
    server.close();
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/node_modules/undici/')).map((f) => f.slice(f.indexOf('/node_modules/undici/') + 21));
    console.log(JSON.stringify({ lean: undiciAgent().lean, status: res.status, body, loaded, requestApi }));
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, encoding: 'utf8' }).trim()) as {
    lean: boolean;
    status: number;
    body: string;
    loaded: string[];
    requestApi: boolean;
  };
  expect(out).toMatchObject({ lean: true, status: 200, body: '{"ok":true}', requestApi: false });
  expect(out.loaded).toContain('lib/dispatcher/agent.js');
  for (const heavy of ['index.js', 'lib/web/fetch/index.js', 'lib/web/websocket/websocket.js', 'lib/mock/mock-agent.js', 'lib/api/index.js', 'lib/api/readable.js']) {
    expect(out.loaded).not.toContain(heavy);
  }
});
