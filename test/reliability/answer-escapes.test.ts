// A hostile server that spells the API key in JSON \u escapes in its answer to a signed request.
// The client scrubs the body as text the moment it is read, which cannot see a key so spelled; the
// parsed answer's strings are scrubbed again once decoded. What the state file keeps of the answer
// (a step's response) must be what was scrubbed after decoding, as a poll record is
// (client-redaction.test.ts): kept as received, the state file holds the key in a spelling any JSON
// reader turns back into it. The real sandbox answers, the real executor records, SQLite keeps.
import { afterEach, describe, expect, it } from 'vitest';
import type { Rule } from '../../src/domain.js';
import { CANARY_API_KEY } from '../e2e/helpers.js';
import { SecretWindows } from './hostile-secrets.js';
import { openRig, SOL, type Rig } from './trust-rig.js';

const CLAIM_THEN_DEPOSIT: Rule = {
  name: 'compound',
  id: 'compound',
  when: [{ field: 'pending_sol', op: 'gte', value: SOL / 2n }],
  do: [{ kind: 'claim' }, { kind: 'deposit', symbol: 'SOL2X', amount: { kind: 'percent', ppm: 500_000 } }],
  limits: { oncePerEpoch: true, cooldownMs: undefined, maxPlansPerDay: undefined, maxLamportsPerDay: undefined },
};

/** Every character of `text` as a JSON \u escape. */
const escaped = (text: string) => [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

/** Every string of a JSON text, keys included, as a JSON reader decodes them. */
function decodedStrings(text: string): string[] {
  const out: string[] = [];
  JSON.parse(text, (k: string, v: unknown) => {
    out.push(k, typeof v === 'string' ? v : '');
    return v;
  });
  return out;
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('the answer to a signed request, as the state file keeps it', () => {
  it('holds no spelling of the API key: a key written in \\u escapes is scrubbed once decoded, in a value and in a key', async () => {
    rig = await openRig({ rule: CLAIM_THEN_DEPOSIT, pendingLamports: SOL, balanceLamports: 10n * SOL, claimSettleMs: 60_000 });
    const key = escaped(CANARY_API_KEY);
    // Applied, and said so: the claim is acknowledged with this answer kept.
    rig.fault({ kind: 'malformed', match: { op: 'claim' }, status: 200, body: `{"status":"success","claimed_sol":1,"tx":"t1","echo":"Bearer ${key}"}` });
    // Neither applied nor refused: the deposit is unknown, this answer kept.
    rig.fault({ kind: 'malformed', match: { op: 'deposit' }, status: 200, body: `{"status":"pending","${key}":1}`, apply: false });
    await rig.cycle();

    const steps = rig.plans()[0]?.steps ?? [];
    expect(steps.map((s) => `${s.kind}:${s.state}`)).toEqual(['claim:acknowledged', 'deposit:unknown']);
    const secrets = new SecretWindows();
    secrets.add('api key', CANARY_API_KEY);
    for (const step of steps) {
      const kept = step.responseRaw ?? '';
      expect(kept).toContain('[REDACTED]');
      // As stored, and as `actions --json`, sqlite3 or any other JSON reader would print it.
      for (const text of [kept, ...decodedStrings(kept)]) expect(secrets.find(text)).toBeUndefined();
    }
  });
});
