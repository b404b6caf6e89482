import { describe, expect, it } from 'vitest';
import { parseJsonLossless, stringifyLossless } from '../../src/api/json.js';
import {
  parseActionResponse,
  parseErrorBody,
  parseLeaderboard,
  parseWalletSummary,
  roundedAmountFields,
  type ResponseContext,
} from '../../src/api/schemas.js';
import { ApiError } from '../../src/errors.js';
import { thrown } from '../support/errors.js';

const ADDR = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
const ADDR2 = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

function ctx(rawBody: string): ResponseContext {
  return { method: 'GET', url: 'http://api.test/v1/x', status: 200, rawBody };
}

function summary(text: string, address = ADDR) {
  return parseWalletSummary(parseJsonLossless(text), address, ctx(text));
}

const errorOf = (fn: () => unknown): ApiError => thrown(ApiError, fn);

const good = {
  address: ADDR,
  epoch: '2025-06-01',
  pending_sol: '1.5',
  lifetime_sol: 12.25,
  rank: 3,
  tier: 'gold',
  breakdown: [{ vault: 'SOL2X', volume: 1234.5, score: 7 }],
};

describe('wallet summary', () => {
  it('turns amounts into exact lamports, keeps the raw body and unknown fields', () => {
    // JSON.parse would read this pending_sol as 123456789.12345679
    const text = JSON.stringify({ ...good, pending_sol: 'PENDING', future_field: { x: 1 } }).replace(
      '"PENDING"',
      '123456789.123456789',
    );
    expect(text).toContain('123456789.123456789');
    const s = summary(text);
    expect(s.pendingLamports).toBe(123_456_789_123_456_789n);
    expect(s.lifetimeLamports).toBe(12_250_000_000n);
    expect(s.rank).toBe(3);
    expect(s.tier).toBe('gold');
    expect(s.breakdown).toEqual([{ vault: 'SOL2X', volume: '1234.5', score: '7' }]);
    expect(stringifyLossless(s.raw)).toBe(text);
    expect((s.raw as Record<string, unknown>)['future_field']).toBeDefined();
  });

  it('accepts amounts given as decimal strings and 18 significant digits exactly', () => {
    const s = summary('{"address":"' + ADDR + '","epoch":"2024-02-29","pending_sol":"999999999.999999999","lifetime_sol":1000000000.000000001}');
    expect(s.pendingLamports).toBe(999_999_999_999_999_999n);
    expect(s.lifetimeLamports).toBe(1_000_000_000_000_000_001n);
  });

  it('tolerates missing optional fields as null', () => {
    const s = summary(`{"address":"${ADDR}","epoch":"2025-06-01","pending_sol":0}`);
    expect(s).toMatchObject({ pendingLamports: 0n, lifetimeLamports: null, rank: null, tier: null, breakdown: [] });
  });

  const bad: Array<[string, Record<string, unknown>, string]> = [
    ['missing pending', { pending_sol: undefined }, 'pending_sol: required'],
    ['negative', { pending_sol: -1 }, 'pending_sol: expected a non-negative decimal amount'],
    ['negative string', { pending_sol: '-0.5' }, 'pending_sol: expected a non-negative decimal amount'],
    ['NaN string', { pending_sol: 'NaN' }, 'pending_sol: expected a non-negative decimal amount'],
    ['word', { pending_sol: 'lots' }, 'pending_sol: expected a non-negative decimal amount'],
    ['boolean', { pending_sol: true }, 'pending_sol: expected a non-negative decimal amount'],
    ['object', { pending_sol: {} }, 'pending_sol: expected a non-negative decimal amount'],
    ['negative of one lamport', { pending_sol: '-0.000000001' }, 'pending_sol: expected a non-negative decimal amount'],
    ['hex', { pending_sol: '0x10' }, 'pending_sol: expected a non-negative decimal amount'],
    ['above u64', { lifetime_sol: '18446744073.709551616' }, 'lifetime_sol: expected a non-negative decimal amount'],
    ['missing epoch', { epoch: undefined }, 'epoch: required'],
    ['epoch format', { epoch: '2025/06/01' }, 'epoch: expected a date YYYY-MM-DD'],
    ['epoch not a real date', { epoch: '2025-02-30' }, 'epoch: expected a date YYYY-MM-DD'],
    ['epoch number', { epoch: 20250601 }, 'epoch: expected a date YYYY-MM-DD'],
    ['missing address', { address: undefined }, 'address: required'],
    ['rank fractional', { rank: 1.5 }, 'rank: expected a positive integer'],
    ['rank negative', { rank: -2 }, 'rank: expected a positive integer'],
    ['tier number', { tier: 3 }, 'tier: expected a string'],
    ['breakdown not array', { breakdown: 'x' }, 'breakdown: expected an array'],
    ['breakdown vault missing', { breakdown: [{ volume: 1 }] }, 'breakdown[0].vault: required'],
    ['breakdown score object', { breakdown: [{ vault: 'v', score: {} }] }, 'breakdown[0].score: expected a number'],
  ];
  for (const [name, patch, issue] of bad) {
    it(`rejects ${name}, naming the field`, () => {
      const text = JSON.stringify({ ...good, ...patch });
      const err = errorOf(() => summary(text));
      // An epoch that is no date is the one fault with a code of its own (SPEC §2): INVALID_EPOCH.
      expect(err.code).toBe(issue.startsWith('epoch:') ? 'INVALID_EPOCH' : 'BAD_RESPONSE');
      expect(err.disposition).toBe('invalid_response');
      expect(err.rawBody).toBe(text);
      expect(err.issues.some((i) => i.startsWith(issue)), err.issues.join('\n')).toBe(true);
      expect(err.message).not.toContain('\n');
    });
  }

  it('rejects an exponent that overflows (1e300) as a number token', () => {
    const text = `{"address":"${ADDR}","epoch":"2025-06-01","pending_sol":1e300}`;
    const err = errorOf(() => summary(text));
    expect(err.issues[0]).toMatch(/^pending_sol: expected a non-negative decimal amount, got "1e300"/);
  });

  it('reads rank 0 (the real service\'s "unranked") and null as no rank, in number or string form', () => {
    for (const rank of ['0', '"0"', 'null']) {
      const s = summary(`{"address":"${ADDR}","epoch":"2025-06-01","pending_sol":0,"rank":${rank},"tier":"Gold"}`);
      expect(s.rank, rank).toBeNull();
      expect(s.tier).toBe('Gold');
    }
    expect(summary(`{"address":"${ADDR}","epoch":"2025-06-01","pending_sol":0,"rank":"7"}`).rank).toBe(7);
  });

  it('reads float artefacts and exponents as a float-serialising server writes them, rounded toward zero to the lamport', () => {
    const text = `{"address":"${ADDR}","epoch":"2025-06-01","pending_sol":0.30000000000000004,"lifetime_sol":3.9399999999999995}`;
    const s = summary(text);
    expect(s.pendingLamports).toBe(300_000_000n);
    expect(s.lifetimeLamports).toBe(3_939_999_999n);
    // the exact text the server wrote stays in the stored answer
    expect(stringifyLossless(s.raw)).toBe(text);
    expect(roundedAmountFields(s.raw)).toEqual(['pending_sol', 'lifetime_sol']);
    const exp = summary(`{"address":"${ADDR}","epoch":"2025-06-01","pending_sol":1e-9,"lifetime_sol":2.5E3}`);
    expect([exp.pendingLamports, exp.lifetimeLamports]).toEqual([1n, 2_500_000_000_000n]);
    expect(roundedAmountFields(exp.raw)).toEqual([]);
    // below one lamport is zero, and the residue of a float subtraction (-2.7e-17) is zero too
    expect(summary(`{"address":"${ADDR}","epoch":"2025-06-01","pending_sol":1e-10}`).pendingLamports).toBe(0n);
    const residue = summary(`{"address":"${ADDR}","epoch":"2025-06-01","pending_sol":-2.7755575615628914e-17}`);
    expect(residue.pendingLamports).toBe(0n);
    expect(roundedAmountFields(residue.raw)).toEqual(['pending_sol']);
  });

  it('reports every bad field at once', () => {
    const err = errorOf(() => summary(JSON.stringify({ address: ADDR, epoch: 'x', pending_sol: 'y', rank: -1 })));
    expect(err.issues.map((i) => i.split(':')[0])).toEqual(['epoch', 'pending_sol', 'rank']);
  });

  it('rejects a summary for another address than the one asked for', () => {
    const err = errorOf(() => summary(JSON.stringify(good), ADDR2));
    expect(err.issues[0]).toContain(`address: expected ${ADDR2}`);
    expect(err.issues[0]).toContain(ADDR);
  });

  it('rejects a body that is not an object', () => {
    for (const text of ['[]', '"x"', 'null', '42']) {
      const err = errorOf(() => summary(text));
      expect(err.issues[0], text).toMatch(/^body: expected a JSON object/);
    }
  });
});

describe('leaderboard', () => {
  const entry = (rank: unknown, address = ADDR) => ({ rank, address, score: 10.5, total_rewards_sol: '3.000000001' });

  it('parses entries with exact lamports and keeps unknown fields in raw', () => {
    const text = JSON.stringify([{ ...entry(1), extra: 'kept' }, entry(2, ADDR2), { rank: 3, address: ADDR }]);
    const entries = parseLeaderboard(parseJsonLossless(text), ctx(text));
    expect(entries).toEqual([
      { rank: 1, address: ADDR, score: '10.5', totalRewardsLamports: 3_000_000_001n },
      { rank: 2, address: ADDR2, score: '10.5', totalRewardsLamports: 3_000_000_001n },
      { rank: 3, address: ADDR, score: null, totalRewardsLamports: null },
    ]);
    expect(parseLeaderboard(parseJsonLossless('[]'), ctx('[]'))).toEqual([]);
  });

  const bad: Array<[string, unknown, string]> = [
    ['not an array', { entries: [] }, 'body: expected an array'],
    ['first rank not 1', [entry(2)], '[0].rank: expected the first rank to be 1'],
    ['duplicate rank', [entry(1), entry(1)], '[1].rank: expected ranks ascending'],
    ['descending rank', [entry(1), entry(3), entry(2)], '[2].rank: expected ranks ascending'],
    ['rank zero', [entry(0)], '[0].rank: expected a positive integer'],
    ['rank string word', [entry('first')], '[0].rank: expected a positive integer'],
    ['address not base58', [entry(1, '0OIl-not-an-address-at-all-000000000')], '[0].address: expected a base58 address'],
    ['address missing', [{ rank: 1 }], '[0].address: required'],
    ['bad total', [{ ...entry(1), total_rewards_sol: '-3' }], '[0].total_rewards_sol: expected a non-negative decimal amount'],
  ];
  for (const [name, value, issue] of bad) {
    it(`rejects ${name}`, () => {
      const text = JSON.stringify(value);
      const err = errorOf(() => parseLeaderboard(parseJsonLossless(text), ctx(text)));
      expect(err.disposition).toBe('invalid_response');
      expect(err.issues.some((i) => i.startsWith(issue)), err.issues.join('\n')).toBe(true);
    });
  }
});

describe('action responses', () => {
  it('is permissive: everything optional, unknown fields kept, claimed_sol exact', () => {
    const text = '{"status":"ok","claimed_sol":0.000000001,"tx":"abc","epoch":"2025-06-01","new_field":[1,2]}';
    const a = parseActionResponse(parseJsonLossless(text), ctx(text));
    expect(a).toMatchObject({ status: 'ok', claimedLamports: 1n, tx: 'abc', epoch: '2025-06-01', vault: null });
    expect(stringifyLossless(a.raw)).toBe(text);
    const d = parseActionResponse(parseJsonLossless('{"estimated_shares":12.345678901234,"received":"5"}'), ctx(''));
    expect(d).toMatchObject({ estimatedShares: '12.345678901234', received: '5', claimedLamports: null });
    expect(parseActionResponse({}, ctx('{}')).status).toBeNull();
  });

  it('rounds a float-serialised claimed_sol toward zero and says so', () => {
    const text = '{"status":"success","claimed_sol":0.30000000000000004,"tx":"T","epoch":"2025-10-31"}';
    const a = parseActionResponse(parseJsonLossless(text), ctx(text));
    expect(a).toMatchObject({ status: 'success', claimedLamports: 300_000_000n, roundedFields: ['claimed_sol'] });
    expect(stringifyLossless(a.raw)).toBe(text);
    expect(parseActionResponse(parseJsonLossless('{"claimed_sol":3.94}'), ctx('')).roundedFields).toEqual([]);
  });

  it('rejects a claimed_sol that is not an amount, and a non-object', () => {
    const err = errorOf(() => parseActionResponse(parseJsonLossless('{"claimed_sol":"NaN"}'), ctx('')));
    expect(err.issues[0]).toMatch(/^claimed_sol: expected a non-negative decimal amount/);
    expect(errorOf(() => parseActionResponse(parseJsonLossless('[1]'), ctx(''))).issues[0]).toMatch(/^body:/);
  });

  it('reads a field said for the reader of another shape as absent, kept raw (helper h29e; `{"tx":5}` was refused)', () => {
    const text = '{"status":"success","tx":5,"mint":{"address":"So1"},"received":{"amount":"1"},"vault":[],"share_mint":true,"estimated_shares":"x","epoch":7}';
    const a = parseActionResponse(parseJsonLossless(text), ctx(text));
    expect(a).toMatchObject({ status: 'success', tx: null, mint: null, received: null, vault: null, shareMint: null, estimatedShares: 'x', epoch: null });
    expect(stringifyLossless(a.raw)).toBe(text);
    // What decides is still checked: a status that is no word, a claimed_sol that is no amount.
    expect(errorOf(() => parseActionResponse(parseJsonLossless('{"status":1}'), ctx(''))).issues[0]).toMatch(/^status: expected a string/);
  });
});

describe('error bodies', () => {
  it('reads the common shapes and never throws', () => {
    expect(parseErrorBody(parseJsonLossless('{"error":"bad_signature","message":"signature does not verify"}'))).toEqual({
      code: undefined,
      message: 'signature does not verify',
    });
    expect(parseErrorBody(parseJsonLossless('{"error":{"code":"INVALID","message":"nope"}}'))).toEqual({ code: 'INVALID', message: 'nope' });
    expect(parseErrorBody(parseJsonLossless('{"error":"rate limited"}'))).toEqual({ code: undefined, message: 'rate limited' });
    expect(parseErrorBody(parseJsonLossless('{"code":422,"detail":"amount"}'))).toEqual({ code: '422', message: 'amount' });
    expect(parseErrorBody('x')).toEqual({ code: undefined, message: undefined });
    expect(parseErrorBody(null)).toEqual({ code: undefined, message: undefined });
  });
});
