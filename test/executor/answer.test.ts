// classifyAnswer (issue 11, item 1): a 2xx says the request arrived, only the body says it was
// applied. One row per line of the function's doc comment, then the edges: case, custom sets,
// empty bodies and `error` members that say nothing.
import { describe, expect, it } from 'vitest';
import { DEFAULT_APPLIED_STATUSES, DEFAULT_REFUSED_STATUSES } from '../../src/api/endpoints.js';
import { classifyAnswer, requestRefusalScope, type AnswerOutcome } from '../../src/executor/answer.js';

const DEFAULTS = { applied: DEFAULT_APPLIED_STATUSES, refused: DEFAULT_REFUSED_STATUSES };

/** The body as the client hands it over: `status` lifted out, `raw` the whole parsed JSON. */
function body(raw: Record<string, unknown>): { status: string | null; raw: unknown } {
  const s = raw['status'];
  return { status: typeof s === 'string' ? s : null, raw };
}

interface Row {
  name: string;
  http: number;
  raw: Record<string, unknown>;
  outcome: AnswerOutcome;
}

describe('classifyAnswer with the default sets', () => {
  it('has the documented defaults', () => {
    expect([...DEFAULT_APPLIED_STATUSES]).toEqual(['success', 'submitted', 'claimed', 'ok']);
    expect([...DEFAULT_REFUSED_STATUSES]).toEqual(['failed', 'rejected', 'error']);
  });

  const rows: Row[] = [
    // an `error` member with an applied status: the body contradicts itself
    { name: 'success + error object', http: 200, raw: { status: 'success', error: { code: 'x' } }, outcome: 'unknown' },
    { name: 'ok + error string', http: 200, raw: { status: 'ok', error: 'boom' }, outcome: 'unknown' },
    { name: 'submitted + error true', http: 201, raw: { status: 'submitted', error: true }, outcome: 'unknown' },
    // an `error` member, or a refused status
    { name: 'error object, no status', http: 200, raw: { error: { code: 'insufficient_balance', message: 'no' } }, outcome: 'refused' },
    { name: 'error string, no status', http: 200, raw: { error: 'nope' }, outcome: 'refused' },
    { name: 'error object + pending', http: 200, raw: { status: 'pending', error: { code: 'x' } }, outcome: 'refused' },
    { name: 'error object + failed', http: 200, raw: { status: 'failed', error: { code: 'x' } }, outcome: 'refused' },
    { name: 'error object under 202', http: 202, raw: { error: { code: 'x' } }, outcome: 'refused' },
    { name: 'error number', http: 200, raw: { error: 3 }, outcome: 'refused' },
    { name: 'failed', http: 200, raw: { status: 'failed' }, outcome: 'refused' },
    { name: 'rejected', http: 200, raw: { status: 'rejected' }, outcome: 'refused' },
    { name: 'error (as a status)', http: 200, raw: { status: 'error' }, outcome: 'refused' },
    { name: 'failed under 202', http: 202, raw: { status: 'failed' }, outcome: 'refused' },
    // an applied status: applied, except under 202
    { name: 'success', http: 200, raw: { status: 'success', claimed_sol: 1 }, outcome: 'applied' },
    { name: 'submitted', http: 200, raw: { status: 'submitted', tx: 't' }, outcome: 'applied' },
    { name: 'claimed', http: 200, raw: { status: 'claimed' }, outcome: 'applied' },
    { name: 'ok', http: 200, raw: { status: 'ok' }, outcome: 'applied' },
    { name: 'success under 201', http: 201, raw: { status: 'success' }, outcome: 'applied' },
    { name: 'success under 202', http: 202, raw: { status: 'success' }, outcome: 'unknown' },
    { name: 'submitted under 202', http: 202, raw: { status: 'submitted' }, outcome: 'unknown' },
    // no status, `pending` or any other word
    { name: 'pending under 202', http: 202, raw: { status: 'pending' }, outcome: 'unknown' },
    { name: 'pending under 200', http: 200, raw: { status: 'pending' }, outcome: 'unknown' },
    { name: 'queued', http: 200, raw: { status: 'queued' }, outcome: 'unknown' },
    { name: 'no status, a tx', http: 200, raw: { tx: 't', claimed_sol: 1 }, outcome: 'unknown' },
    { name: 'empty object', http: 200, raw: {}, outcome: 'unknown' },
    { name: 'empty status', http: 200, raw: { status: '' }, outcome: 'unknown' },
    { name: 'a status that only contains an applied word', http: 200, raw: { status: 'not success' }, outcome: 'unknown' },
    { name: 'a status that only contains a refused word', http: 200, raw: { status: 'failed_over' }, outcome: 'unknown' },
    // `error` members that say nothing are no error
    { name: 'success + error ""', http: 200, raw: { status: 'success', error: '' }, outcome: 'applied' },
    { name: 'success + error false', http: 200, raw: { status: 'success', error: false }, outcome: 'applied' },
    { name: 'success + error null', http: 200, raw: { status: 'success', error: null }, outcome: 'applied' },
    { name: 'no status + error null', http: 200, raw: { error: null }, outcome: 'unknown' },
    { name: 'pending + error false', http: 200, raw: { status: 'pending', error: false }, outcome: 'unknown' },
  ];

  it.each(rows)('HTTP $http $name → $outcome', ({ http, raw, outcome }) => {
    expect(classifyAnswer(http, body(raw), DEFAULTS).outcome).toBe(outcome);
  });

  it.each([
    ['SUCCESS', 'applied'],
    ['Submitted', 'applied'],
    ['  ok  ', 'applied'],
    ['FAILED', 'refused'],
    ['Rejected', 'refused'],
    ['Pending', 'unknown'],
  ] as const)('compares %j case-insensitively (and trimmed) → %s', (status, outcome) => {
    expect(classifyAnswer(200, body({ status }), DEFAULTS).outcome).toBe(outcome);
  });

  it('204 with no body, or no body at all, is unknown', () => {
    expect(classifyAnswer(204, undefined, DEFAULTS).outcome).toBe('unknown');
    // The client turns an empty 2xx into `{}`: still nothing that says "applied".
    expect(classifyAnswer(204, { status: null, raw: {} }, DEFAULTS).outcome).toBe('unknown');
    expect(classifyAnswer(200, { raw: undefined }, DEFAULTS).outcome).toBe('unknown');
  });

  it('a body that is not an object has no error member and no status: unknown', () => {
    for (const raw of [null, [], ['error'], 'error', 42]) {
      expect(classifyAnswer(200, { status: null, raw }, DEFAULTS).outcome, JSON.stringify(raw)).toBe('unknown');
    }
  });
});

describe('classifyAnswer details', () => {
  it('keeps the status as sent and the error code, for the record', () => {
    const v = classifyAnswer(200, body({ status: 'Failed', error: { code: 'insufficient_balance', message: 'm' } }), DEFAULTS);
    expect(v).toMatchObject({ outcome: 'refused', status: 'Failed', errorCode: 'insufficient_balance' });
    expect(v.detail).toBe('HTTP 200 with error "insufficient_balance"');
  });

  it('takes a string error as its code, bounded to 64 characters', () => {
    const v = classifyAnswer(200, body({ error: 'x'.repeat(200) }), DEFAULTS);
    expect(v.outcome).toBe('refused');
    expect(v.errorCode).toBe('x'.repeat(64));
  });

  it('an error object without a string code: refused, no code', () => {
    for (const error of [{}, { code: 7 }, { message: 'm' }]) {
      const v = classifyAnswer(200, body({ error }), DEFAULTS);
      expect(v.outcome).toBe('refused');
      expect(v.errorCode).toBeUndefined();
      expect(v.detail).toBe('HTTP 200 with an error');
    }
  });

  it('says why an answer is unknown', () => {
    expect(classifyAnswer(202, body({ status: 'success' }), DEFAULTS).detail).toBe('HTTP 202 (accepted, not yet done) status "success"');
    expect(classifyAnswer(200, body({ status: 'pending' }), DEFAULTS).detail).toBe('HTTP 200 status "pending": neither applied nor refused');
    expect(classifyAnswer(200, body({}), DEFAULTS).detail).toBe('HTTP 200 no status: neither applied nor refused');
    expect(classifyAnswer(200, body({ status: 'ok', error: 'e' }), DEFAULTS).detail).toBe('status "ok" with error "e": the answer contradicts itself');
  });

  it('bounds a long status in the detail', () => {
    const v = classifyAnswer(200, body({ status: 'p'.repeat(500) }), DEFAULTS);
    expect(v.outcome).toBe('unknown');
    expect(v.detail.length).toBeLessThan(120);
    expect(v.status).toHaveLength(500);
  });
});

describe('classifyAnswer with configured sets (api.endpoints.<op>.applied / .refused)', () => {
  const custom = { applied: ['Done', 'queued'], refused: ['NOPE'] };

  it.each([
    ['done', 'applied'],
    ['QUEUED', 'applied'],
    ['nope', 'refused'],
    // The defaults are replaced, not added to.
    ['success', 'unknown'],
    ['failed', 'unknown'],
    ['rejected', 'unknown'],
  ] as const)('%j → %s', (status, outcome) => {
    expect(classifyAnswer(200, body({ status }), custom).outcome).toBe(outcome);
  });

  it('an empty refused set leaves only the error member to refuse', () => {
    const sets = { applied: ['ok'], refused: [] };
    expect(classifyAnswer(200, body({ status: 'failed' }), sets).outcome).toBe('unknown');
    expect(classifyAnswer(200, body({ error: { code: 'e' } }), sets).outcome).toBe('refused');
    expect(classifyAnswer(200, body({ status: 'ok' }), sets).outcome).toBe('applied');
  });

  it('a configured applied status is still not applied under 202, nor next to an error', () => {
    expect(classifyAnswer(202, body({ status: 'done' }), custom).outcome).toBe('unknown');
    expect(classifyAnswer(200, body({ status: 'done', error: { code: 'x' } }), custom).outcome).toBe('unknown');
  });

  it('a word in both sets is not applied', () => {
    // A config mistake must not turn a refusal into a fact: the refused reading wins or it is unknown.
    const both = { applied: ['ok', 'maybe'], refused: ['maybe'] };
    expect(classifyAnswer(200, body({ status: 'maybe' }), both).outcome).not.toBe('applied');
  });
});

// requestRefusalScope (issue 12): which refusals say the *request* is wrong (the plan fails, spends
// nothing, signing pauses) rather than the action (rejected, counts as usual).
describe('requestRefusalScope', () => {
  it.each([
    [401, '', 'all'],
    [403, 'forbidden', 'all'],
    [400, 'invalid_signature: signature does not verify', 'wallet'],
    [422, 'stale_timestamp: x-svc-ts is 600s away from the server clock', 'wallet'],
    [400, 'missing header x-acme-wallet', 'wallet'],
    [400, 'Authorization required', 'wallet'],
    [422, 'bad api_key', 'wallet'],
    [400, 'nothing_to_claim', undefined],
    [422, 'insufficient_balance', undefined],
    [422, 'insufficient_tokens: burn needs 0.1 SOL5X', undefined],
    [422, 'vault paused', undefined],
    [409, 'signature replayed', undefined],
    [500, 'signature', undefined],
    [undefined, 'signature', undefined],
  ] as const)('HTTP %s "%s" → %s', (status, words, scope) => {
    expect(requestRefusalScope(status, words)).toBe(scope);
  });

  // Known gap (helper h29b): a freshness refusal that does not name the timestamp is read as a
  // refusal of the action (`rejected`: the rule's limits spent, signing goes on), not of the request
  // (SPEC §2: `failed`, signing paused). refusal.ts's hint calls both words a clock signal; the
  // sandbox never showed it, its own refusal says "stale_timestamp: x-svc-ts …". Not fixed here:
  // "expired" and "window" are also the words of a refusal of the action ("claim window expired"),
  // and calling that a wrong request pauses the wallet until a restart. For the lead to decide.
  it.fails('HTTP 400 "request_expired: request expired" → wallet', () => {
    expect(requestRefusalScope(400, 'request_expired: request expired')).toBe('wallet');
  });
  it.fails('HTTP 400 "stale_request: request too old" → wallet', () => {
    expect(requestRefusalScope(400, 'stale_request: request too old')).toBe('wallet');
  });
});
