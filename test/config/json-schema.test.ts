import { describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/index.js';

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; required?: string[] };

describe('the JSON Schema of the config file', () => {
  const schema = configJsonSchema() as Schema;

  it('is the shipped config/autoclaim.schema.json (run vitest -u after a schema change)', async () => {
    await expect(`${JSON.stringify(schema, null, 2)}\n`).toMatchFileSnapshot('../../config/autoclaim.schema.json');
  });

  it('requires the money limit and refuses unknown keys, as the loader does', () => {
    expect(schema.required).toEqual(['api', 'safety']);
    // Wallets come from wallets:, wallets_file: or both; at least one of the two must be there.
    expect(schema.anyOf).toEqual([
      { properties: { wallets: true }, required: ['wallets'] },
      { properties: { wallets_file: true }, required: ['wallets_file'] },
    ]);
    expect(schema.properties?.wallets_file).toMatchObject({ type: 'string', minLength: 1 });
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties?.safety?.required).toEqual(['max_sol_per_action']);
    expect(schema.properties?.api?.required).toEqual(['base_url']);
  });

  it('describes the fields an editor shows on hover', () => {
    expect(schema.title).toBe('autoclaim configuration');
    expect(schema.properties?.api?.properties?.timeout_ms).toMatchObject({ default: 10_000, type: 'integer' });
    expect(schema.properties?.safety?.properties?.max_sol_per_action?.description).toMatch(/required/);
    expect(schema.properties?.schedule?.properties?.jitter).toMatchObject({ default: '10s', pattern: expect.any(String) });
  });
});
