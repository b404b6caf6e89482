// `doctor` against a hostile API that echoes the API key back, spelled in JSON \u escapes, in its
// wallet summaries: as a field's name, as the tier, as an amount of the wrong type. The doctor reads
// summaries itself (it shows how the service answers), and quotes what it found cut to 40 or 60
// characters: a quote of a secret decoded and not scrubbed is cut before the output's redactor can
// see the whole of it. An API key of 64 characters, as many services issue.
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretWindows } from '../reliability/hostile-secrets.js';
import { loopback, stopAll } from '../api/loopback.js';
import { configYaml, makeWallets, runCli, tempDir } from './helpers.js';

const API_KEY = 'f3a9c1e5b2d4f6a87c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a';
const escaped = (text: string) => [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

afterEach(() => stopAll());

describe('doctor against a server echoing the API key in \\u escapes', () => {
  it.each(['', '--json'])('quotes no piece of it (doctor %s)', async (flag) => {
    const { dir, cleanup } = tempDir();
    try {
      const [alpha, beta] = makeWallets(dir, ['alpha', 'beta']);
      const key = escaped(API_KEY);
      const srv = await loopback((req, res) => {
        const url = req.url ?? '';
        const body = url.endsWith('/health')
          ? '{"status":"ok"}'
          : url.endsWith(alpha?.address ?? '-')
            ? `{"address":"${alpha?.address}","epoch":"${new Date().toISOString().slice(0, 10)}","pending_sol":1,"tier":"${key}","${key}":1}`
            : `{"address":"${beta?.address}","epoch":"${new Date().toISOString().slice(0, 10)}","pending_sol":"${key}"}`;
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      });
      const file = `${dir}/autoclaim.yaml`;
      writeFileSync(file, configYaml({ baseUrl: srv.base, wallets: [alpha!, beta!] }));
      const r = await runCli(['doctor', '--config', file, ...(flag === '' ? [] : [flag])], { cwd: dir, env: { AUTOCLAIM_API_KEY: API_KEY } });
      const out = `${r.stdout}\n${r.stderr}`;
      // The doctor did read both summaries and say what it found.
      expect(out).toContain('beta');
      expect(out).toContain('pending_sol');
      const secrets = new SecretWindows();
      secrets.add('API key', API_KEY);
      expect(secrets.find(out)).toBeUndefined();
    } finally {
      cleanup();
    }
  });
});
