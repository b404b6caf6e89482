// `doctor` against a hostile API that echoes the API key back, spelled in JSON \u escapes, in its
// wallet summaries: as a field's name, as the tier, as an amount of the wrong type. The doctor reads
// summaries itself (it shows how the service answers), and quotes what it found cut to 40 or 60
// characters: a quote of a secret decoded and not scrubbed is cut before the output's redactor can
// see the whole of it. An API key of 64 characters, as many services issue; and a token of 150
// (a JWT is longer) echoed in the rate-limit and request-id headers the doctor quotes cut to 80 and 128.
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretWindows } from '../reliability/hostile-secrets.js';
import { loopback, stopAll } from '../api/loopback.js';
import { configYaml, makeWallets, runCli, tempDir } from './helpers.js';

const API_KEY = 'f3a9c1e5b2d4f6a87c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a';
const LONG_KEY = `eyJhbGciOiJFZERTQSJ9.${'eyJzdWIiOiJhdXRvY2xhaW0ifQ'.repeat(4)}.${'Zk9xT2pR'.repeat(4)}`;
const escaped = (text: string) => [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

afterEach(() => stopAll());

describe('doctor against a server echoing the API key in \\u escapes', () => {
  it.each([
    ['', '64', API_KEY],
    ['--json', '64', API_KEY],
    ['', '158', LONG_KEY],
  ])('quotes no piece of it (doctor %s, a key of %s characters)', async (flag, _length, apiKey) => {
    const { dir, cleanup } = tempDir();
    try {
      const [alpha, beta] = makeWallets(dir, ['alpha', 'beta']);
      const key = escaped(apiKey);
      const srv = await loopback((req, res) => {
        const url = req.url ?? '';
        const body = url.endsWith('/health')
          ? '{"status":"ok"}'
          : url.endsWith(alpha?.address ?? '-')
            ? `{"address":"${alpha?.address}","epoch":"${new Date().toISOString().slice(0, 10)}","pending_sol":1,"tier":"${key}","${key}":1}`
            : `{"address":"${beta?.address}","epoch":"${new Date().toISOString().slice(0, 10)}","pending_sol":"${key}"}`;
        res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-policy': `500;w=60;key=${apiKey}`, 'x-request-id': `r-${apiKey}` }).end(body);
      });
      const file = `${dir}/autoclaim.yaml`;
      writeFileSync(file, configYaml({ baseUrl: srv.base, wallets: [alpha!, beta!] }));
      const r = await runCli(['doctor', '--config', file, ...(flag === '' ? [] : [flag])], { cwd: dir, env: { AUTOCLAIM_API_KEY: apiKey } });
      const out = `${r.stdout}\n${r.stderr}`;
      // The doctor did read both summaries and say what it found.
      expect(out).toContain('beta');
      expect(out).toContain('pending_sol');
      const secrets = new SecretWindows();
      secrets.add('API key', apiKey);
      expect(secrets.find(out)).toBeUndefined();
    } finally {
      cleanup();
    }
  });
});
