import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, summarizeConfig } from '../../src/config/index.js';
import type { AppConfig } from '../../src/domain.js';
import { TempDir } from './helpers.js';

const ROOT = join(import.meta.dirname, '../..');
const NOW = new Date('2025-01-01T00:00:30.000Z');

describe('summarizeConfig: what check prints', () => {
  it('describes the demo config in plain words with the next three polls', () => {
    const config = loadConfig('config/autoclaim.yaml', { env: {}, cwd: ROOT }).config as AppConfig;
    const text = summarizeConfig(config, NOW);
    expect(text.split('\n')).toEqual([
      `config    ${join(ROOT, 'config/autoclaim.yaml')}`,
      'api       sandbox: the simulator, in-process (epoch 1m, 0.000833333 SOL a second per wallet)',
      'api key   $AUTOCLAIM_API_KEY, else systemd credential api_key',
      `state     ${join(ROOT, 'var/autoclaim.db')}`,
      'schedule  */15 * * * * * (+ up to 5s jitter per wallet)',
      '          next polls: 2025-01-01T00:00:45.000Z, 2025-01-01T00:01:00.000Z, 2025-01-01T00:01:15.000Z',
      'safety    at most 10 SOL per action',
      'signing   Ed25519 over the UTF-8 message, signature encoded base58',
      '          headers: authorization: Bearer <API key>, x-svc-ts: <Unix seconds, the {ts} signed>, x-svc-wallet: <wallet address>',
      '          claim     POST /rewards/claim     signs {wallet}|{ts}',
      '          deposit   POST /actions/deposit   signs {wallet}|{symbol}|{amount}|{ts}',
      '          mint      POST /actions/mint      signs {wallet}|{symbol}|{amount}|{ts}',
      '          withdraw  POST /actions/withdraw  signs {wallet}|{symbol}|{amount}|{ts}',
      '          burn      POST /actions/burn      signs {wallet}|{symbol}|{amount}|{ts}',
      '          note: the service does not publish the claim message; confirm it with the service (`autoclaim doctor` shows the exact claim, unsent)',
      '',
      'wallets (3)',
      `  treasury  HYPw44diWPLTXBZ7vQNP1eLtZPu9YMAnnXWp4maArYzL  key: file ${join(ROOT, 'var/demo-keys/treasury.json')}  rules: compound`,
      `  ops       tNY3xNK9yMhxG9NLaHVjCBn1Z2F3xgfH9CwosWyhEBW  key: file ${join(ROOT, 'var/demo-keys/ops.json')}  rules: compound`,
      `  savings   Ayme4xa1H815TdpLohfDE4EhRRhFaGk4kDDwrpRxMy8B  key: file ${join(ROOT, 'var/demo-keys/savings.json')}  rules: compound`,
      '',
      'rules (1)',
      '  compound: when pending rewards are at least 0.05 SOL: claim, then deposit 50% of the claim into SOL2X',
      '    at most once per epoch',
    ]);
  });

  describe('with every kind of rule, key and limit', () => {
    let dir: TempDir;
    beforeEach(() => {
      dir = new TempDir();
    });
    afterEach(() => dir.remove());

    it('names key sources and the API key source in use, never key material', () => {
      dir.write(
        'config.yaml',
        `api:
  base_url: https://rewards.example.com/v1
  api_key_file: /etc/autoclaim/api_key
  header_prefix: X-RW
  endpoints:
    claim: { method: PUT, path: /v2/claim, message: "{op}|{wallet}|{ts}|{epoch}" }
schedule: { poll: "*/15 * * * * *", jitter: 0s }
wallets:
  - { name: a, address: FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf, key: { env: A_SECRET }, rules: [] }
  - { name: b, address: Crs71UyAv56yeSVraCRocDCGB9ZD8m3CZAVY672CPRya, key: { credential: b_key } }
rules:
  - name: sweep
    when: { rank: { in: [1, 2] }, tier: { ne: bronze }, lifetime_sol: { gt: 1.5 } }
    do: [claim, { mint: { symbol: JLP, amount: all } }, { deposit: { symbol: SOL2X, amount: 0.25 } }]
    limits: { once_per_epoch: false, cooldown: 90m, max_plans_per_day: 2, max_sol_per_day: 3 }
safety: { max_sol_per_action: 5 }
metrics: { listen: "127.0.0.1:9464" }
`,
      );
      const config = dir.load('config.yaml').config as AppConfig;
      const env = { AUTOCLAIM_API_KEY: 'CANARY-api-key', A_SECRET: 'CANARY-wallet-secret' };
      const text = summarizeConfig(config, NOW, { env });
      expect(text).toContain('api key   $AUTOCLAIM_API_KEY\n');
      expect(text).toContain('next polls: 2025-01-01T00:00:45.000Z, 2025-01-01T00:01:00.000Z, 2025-01-01T00:01:15.000Z');
      expect(text).toContain('metrics   http://127.0.0.1:9464/metrics');
      expect(text).toContain('  a     FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf  key: env A_SECRET  rules: none (watched only)');
      expect(text).toContain('  b     Crs71UyAv56yeSVraCRocDCGB9ZD8m3CZAVY672CPRya  key: systemd credential b_key  rules: sweep');
      expect(text).toContain(
        '  sweep: when lifetime rewards are above 1.5 SOL and rank is one of [1, 2] and tier is not bronze: ' +
          'claim, then mint JLP with all of the claim, then deposit 0.25 SOL into SOL2X\n' +
          '    cooldown 1h 30m; at most 2 plan(s) a day; at most 3 SOL claimed a day',
      );
      expect(text).not.toContain('CANARY');
      expect(text).toContain('signing   Ed25519 over the UTF-8 message, signature encoded base58\n');
      expect(text).toContain('headers: authorization: Bearer <API key>, x-rw-ts: <Unix seconds, the {ts} signed>, x-rw-wallet: <wallet address>\n');
      expect(text).toContain('          claim     PUT /v2/claim           signs {op}|{wallet}|{ts}|{epoch}\n');
      expect(text).toContain('          deposit   POST /actions/deposit   signs {wallet}|{symbol}|{amount}|{ts}\n');
      expect(text).toMatch(/note: the service does not publish the claim message; confirm it .*autoclaim doctor/);
      expect(summarizeConfig(config, NOW)).toContain(
        'api key   $AUTOCLAIM_API_KEY, else file /etc/autoclaim/api_key, else systemd credential api_key',
      );
    });
  });
});
