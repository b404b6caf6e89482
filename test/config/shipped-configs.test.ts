import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { formatted } from './helpers.js';

const ROOT = join(import.meta.dirname, '../..');

describe('the shipped configs', () => {
  it.each(['config/autoclaim.yaml', 'config/production.example.yaml'])('%s loads without errors or warnings', (file) => {
    const result = loadConfig(file, { env: {}, cwd: ROOT });
    expect(formatted(result)).toEqual({ errors: [], warnings: [] });
    expect(readFileSync(join(ROOT, file), 'utf8').split('\n')[0]).toBe(
      '# yaml-language-server: $schema=./autoclaim.schema.json',
    );
  });

  it('the demo runs the sandbox: three demo wallets, claim then compound half into SOL2X once per epoch', () => {
    const config = loadConfig('config/autoclaim.yaml', { env: {}, cwd: ROOT }).config;
    expect(config?.api.baseUrl).toBe('sandbox');
    expect(config?.sandbox.epochMs).toBe(60_000);
    expect(config?.wallets.map((w) => [w.name, w.key])).toEqual(
      ['treasury', 'ops', 'savings'].map((n) => [n, { file: join(ROOT, `var/demo-keys/${n}.json`) }]),
    );
    expect(config?.rules).toEqual([
      {
        name: 'compound',
        id: 'compound',
        when: [{ field: 'pending_sol', op: 'gte', value: 50_000_000n }],
        do: [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'percent', ppm: 500_000 } }],
        limits: { oncePerEpoch: true, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
      },
    ]);
  });

  it('the demo addresses are the public sandbox demo keys sha256("autoclaim-demo-<i>")', () => {
    const config = loadConfig('config/autoclaim.yaml', { env: {}, cwd: ROOT }).config;
    const demo = (i: number) =>
      bs58.encode(nacl.sign.keyPair.fromSeed(createHash('sha256').update(`autoclaim-demo-${i}`).digest()).publicKey);
    expect(config?.wallets.map((w) => w.address)).toEqual([demo(0), demo(1), demo(2)]);
  });

  it('the production example talks to a real https API with keys outside the file', () => {
    const config = loadConfig('config/production.example.yaml', { env: {}, cwd: ROOT }).config;
    expect(config?.api.baseUrl).toMatch(/^https:\/\/.+\/v1$/);
    expect(config?.state.path).toBe('/var/lib/autoclaim/autoclaim.db');
    expect(config?.wallets.map((w) => w.key)).toEqual([
      { file: '/etc/autoclaim/keys/treasury.json' },
      { credential: 'ops_key' },
      { env: 'SAVINGS_SECRET' },
    ]);
  });
});
