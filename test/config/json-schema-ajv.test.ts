// The exported JSON Schema is what editors (yaml-language-server, which uses Ajv) check the file
// with: it must compile under Ajv's strict mode, every strict option on, and agree with the loader
// on the shipped examples and on values the loader refuses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/index.js';

const ROOT = join(import.meta.dirname, '..', '..');

function strictAjv(): { ajv: Ajv2020; warnings: string[] } {
  const warnings: string[] = [];
  const sink = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
  // strict: true turns on strictSchema, strictNumbers, strictTypes, strictTuples and strictRequired,
  // and with a logger that records, a "log" level strictness is caught too.
  const ajv = new Ajv2020({ strict: true, allErrors: true, logger: { log: sink, warn: sink, error: sink } });
  return { ajv, warnings };
}

describe('the JSON Schema under Ajv strict mode', () => {
  it('compiles with every strict option and no warning', () => {
    const { ajv, warnings } = strictAjv();
    expect(() => ajv.compile(configJsonSchema())).not.toThrow();
    expect(warnings).toEqual([]);
  });

  it('is what config/autoclaim.schema.json holds, and that compiles too', () => {
    const shipped = JSON.parse(readFileSync(join(ROOT, 'config', 'autoclaim.schema.json'), 'utf8')) as Record<string, unknown>;
    const { ajv } = strictAjv();
    expect(() => ajv.compile(shipped)).not.toThrow();
  });

  it.each(['autoclaim.yaml', 'production.example.yaml', 'docker.example.yaml'])('accepts the shipped config/%s', (name) => {
    const { ajv } = strictAjv();
    const validate = ajv.compile(configJsonSchema());
    const data: unknown = parse(readFileSync(join(ROOT, 'config', name), 'utf8'));
    expect(validate(data), JSON.stringify(validate.errors)).toBe(true);
  });

  it('refuses what the loader refuses for shape: no wallets at all, an unknown key, a bad listen', () => {
    const { ajv } = strictAjv();
    const validate = ajv.compile(configJsonSchema());
    const base = { api: { base_url: 'sandbox' }, safety: { max_sol_per_action: 1 } };
    expect(validate(base)).toBe(false); // neither wallets nor wallets_file
    expect(validate({ ...base, wallets_file: 'fleet.jsonl' })).toBe(true);
    expect(validate({ ...base, wallets_file: 'fleet.jsonl', safety: { max_sol_per_actoin: 1 } })).toBe(false);
    expect(validate({ ...base, wallets_file: 'fleet.jsonl', metrics: { listen: 9464 } })).toBe(true);
    expect(validate({ ...base, wallets_file: 'fleet.jsonl', metrics: { listen: 'localhost:9464' } })).toBe(true);
    expect(validate({ ...base, wallets_file: 'fleet.jsonl', metrics: { listen: 'nine' } })).toBe(false);
  });
});
