// What a message template may name: {wallet} {ts} {epoch} {symbol} {amount} {op}; a claim needs
// {wallet} and {ts} and has no symbol or amount; {epoch} and {op} fit any operation.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BASE, TempDir, edit, formatted } from './helpers.js';

function withEndpoints(endpoints: string): string {
  return edit(BASE, '  base_url: http://127.0.0.1:8787/v1\n', `  base_url: http://127.0.0.1:8787/v1\n  endpoints:\n${endpoints}`);
}

describe('message templates in the config', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(() => dir.remove());

  const load = (endpoints: string) => {
    dir.write('config.yaml', withEndpoints(endpoints));
    return formatted(dir.load('config.yaml'));
  };

  it('accepts {epoch} and {op} in a claim and in an action', () => {
    const r = load(
      '    claim: { message: "{op}|{wallet}|{ts}|{epoch}" }\n' +
        '    deposit: { message: "{op}|{wallet}|{symbol}|{amount}|{ts}|{epoch}" }\n' +
        '    mint: { message: "{wallet}|{symbol}|{amount}|{ts}|{op}" }\n',
    );
    expect(r.errors).toEqual([]);
    expect(r.warnings.filter((w) => w.includes('endpoints'))).toEqual([]);
  });

  it('still needs {wallet} and {ts} in a claim, whatever else it signs', () => {
    const r = load('    claim: { message: "{op}|{epoch}" }\n');
    expect(r.errors).toEqual(['config.yaml:4:14 api.endpoints.claim.message: the claim message must include {wallet} and {ts}']);
  });

  it('still refuses {symbol} or {amount} in a claim, and names every placeholder for a typo', () => {
    const r = load('    claim: { message: "{wallet}|{ts}|{symbol}|{epoc}" }\n');
    expect(r.errors).toEqual([
      'config.yaml:4:14 api.endpoints.claim.message: unknown placeholder {epoc}; placeholders are {wallet} {ts} {epoch} {symbol} {amount} {op}',
      'config.yaml:4:14 api.endpoints.claim.message: a claim has no {symbol} to sign',
    ]);
  });
});
