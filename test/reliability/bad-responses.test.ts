// Issue 4, bad input (responses): fast-check generates malformed wallet summaries and leaderboards
// (wrong types, missing fields, negative, NaN-like, 1e300, huge strings, a wrong address echoed,
// duplicate ranks, bad epochs, extra nesting, bodies that are not JSON). Summaries go through the
// real poll path; for every case: no throw, no plan, no signature, no POST, exactly one read, and a
// `poll.failed` event whose issues name the broken field(s) and nothing else.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonLossless } from '../../src/api/json.js';
import { parseActionResponse, parseLeaderboard, parseWalletSummary } from '../../src/api/schemas.js';
import { MAX_JSON_DEPTH } from '../../src/api/json.js';
import { ApiError } from '../../src/errors.js';
import { badLeaderboard, jsonText, manyBadSummary, oneBadSummary, validLeaderboard, validSummary, type BadCase } from './bad-arbitraries.js';
import { issuePath, openBadHarness, within, type BadHarness } from './bad-harness.js';

/** Cases per property; the total is asserted at the end (≥ 10,000). */
const RUNS = { oneBadSummary: 4_000, manyBadSummary: 1_500, badLeaderboard: 4_500 } as const;
const tried: Record<string, number> = {};
const count = (name: string) => void (tried[name] = (tried[name] ?? 0) + 1);

function explain(c: BadCase, issues: unknown): string {
  return `broken: ${c.what.join('; ')}\nbody: ${c.body.slice(0, 300)}\nissues: ${JSON.stringify(issues)}`;
}

describe('malformed wallet summaries through the real poll path', () => {
  let h: BadHarness;
  beforeAll(async () => {
    h = await openBadHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  /** Runs one case and returns the issue paths of its poll.failed event, after the invariants. */
  async function pollRejects(c: BadCase): Promise<string[]> {
    h.answer(c.body);
    const result = await h.cycle(); // never throws: a rejection here fails the property
    const failed = h.lines.filter((e) => e.event === 'poll.failed');
    const issues = failed[0]?.issues;
    const why = explain(c, issues);
    expect(result.polled, why).toBe(false);
    expect(result.plans, why).toEqual([]);
    expect(h.counts, why).toEqual({ gets: 1, posts: 0, signs: 0 });
    expect(h.lines.filter((e) => ['rule.fired', 'plan.recorded', 'action.sent'].includes(String(e.event))), why).toEqual([]);
    expect(failed, why).toHaveLength(1);
    expect(Array.isArray(issues) && issues.length > 0, why).toBe(true);
    return (issues as string[]).map(issuePath);
  }

  it(`${RUNS.oneBadSummary} summaries broken in one place: the issues name exactly that place`, async () => {
    await fc.assert(
      fc.asyncProperty(oneBadSummary(h.wallet.address), async (c) => {
        count('oneBadSummary');
        const paths = await pollRejects(c);
        const why = explain(c, paths);
        for (const f of c.fields) expect(paths.some((p) => within(p, f)), why).toBe(true);
        for (const p of paths) expect(c.fields.some((f) => within(p, f)), why).toBe(true);
      }),
      { numRuns: RUNS.oneBadSummary },
    );
    expect(h.store.listPlans()).toEqual([]);
  });

  it(`${RUNS.manyBadSummary} summaries broken in 2–4 places: every issue names one of them`, async () => {
    await fc.assert(
      fc.asyncProperty(manyBadSummary(h.wallet.address), async (c) => {
        count('manyBadSummary');
        const paths = await pollRejects(c);
        const why = explain(c, paths);
        for (const p of paths) expect(c.fields.some((f) => within(p, f)), why).toBe(true);
        // The echoed address is compared only once the shape is right; every other break is named.
        for (const f of c.fields.filter((x) => x !== 'address')) expect(paths.some((p) => within(p, f)), why).toBe(true);
      }),
      { numRuns: RUNS.manyBadSummary },
    );
    expect(h.store.listPlans()).toEqual([]);
  });

  it('the control: a valid summary through the same path plans, signs and posts (so the checks above can fail)', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(validSummary(h.wallet.address), async (o) => {
        n += 1;
        h.answer(jsonText(o));
        const result = await h.cycle();
        expect(result.polled).toBe(true);
        expect(result.plans).toHaveLength(1);
        expect(h.counts.signs).toBeGreaterThan(0);
        expect(h.counts.posts).toBeGreaterThan(0);
        expect(h.lines.filter((e) => e.event === 'poll.failed')).toEqual([]);
      }),
      { numRuns: 25 },
    );
    expect(h.store.listPlans({ limit: 1000 })).toHaveLength(n);
  });
});

describe('malformed leaderboards', () => {
  let h: BadHarness;
  beforeAll(async () => {
    h = await openBadHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it(`${RUNS.badLeaderboard} leaderboards broken in one place: an ApiError naming exactly that place`, async () => {
    await fc.assert(
      fc.asyncProperty(badLeaderboard, async (c) => {
        count('badLeaderboard');
        h.answer(c.body);
        const err: unknown = await h.client.leaderboard(25).then(
          () => undefined,
          (e: unknown) => e,
        );
        const why = explain(c, err instanceof ApiError ? err.issues : String(err));
        expect(err, why).toBeInstanceOf(ApiError);
        const e = err as ApiError;
        expect([e.code, e.disposition], why).toEqual(['BAD_RESPONSE', 'invalid_response']);
        expect(e.rawBody, why).toBe(c.body);
        const paths = e.issues.map(issuePath);
        expect(paths.length, why).toBeGreaterThan(0);
        for (const f of c.fields) expect(paths.some((p) => within(p, f)), why).toBe(true);
        for (const p of paths) expect(c.fields.some((f) => within(p, f)), why).toBe(true);
        expect(h.counts.gets, why).toBe(1);
      }),
      { numRuns: RUNS.badLeaderboard },
    );
  });

  it('the control: valid leaderboards parse', async () => {
    await fc.assert(
      fc.asyncProperty(validLeaderboard, async (rows) => {
        h.answer(jsonText(rows));
        const r = await h.client.leaderboard(25);
        expect(r.entries.map((e) => e.rank)).toEqual(rows.map((_, i) => i + 1));
      }),
      { numRuns: 25 },
    );
  });
});

describe('the two gaps these properties found (fixed in src/api)', () => {
  const ctx = { method: 'GET', url: 'http://api.test/v1/x', status: 200, rawBody: '' };
  const ADDR = '9nSbw48SenGkWjidUhoYiBGW8CFixrFtiXZyVmrTm6xc';
  const summary = (extra: string) => `{"address":"${ADDR}","epoch":"2026-01-01","pending_sol":"1"${extra}}`;
  const issuesOf = (f: () => unknown): string[] => {
    try {
      f();
    } catch (e) {
      if (e instanceof ApiError) return e.issues;
      throw e;
    }
    return [];
  };

  it.each(['"high"', '"NaN"', '"Infinity"', '""', `"${'9'.repeat(65)}"`])('a score or volume of %s is refused in reads', (bad) => {
    const s = (field: string) => summary(`,"breakdown":[{"vault":"v","${field}":${bad}}]`);
    expect(issuesOf(() => parseWalletSummary(parseJsonLossless(s('score')), ADDR, ctx))[0]).toMatch(/^breakdown\[0\]\.score: expected a number/);
    expect(issuesOf(() => parseWalletSummary(parseJsonLossless(s('volume')), ADDR, ctx))[0]).toMatch(/^breakdown\[0\]\.volume: expected a number/);
    const board = `[{"rank":1,"address":"${ADDR}","score":${bad}}]`;
    expect(issuesOf(() => parseLeaderboard(parseJsonLossless(board), ctx))[0]).toMatch(/^\[0\]\.score: expected a number/);
    // The answer to a signed request stays tolerant: an applied deposit must not turn unknown
    // over a cosmetic field.
    expect(parseActionResponse(parseJsonLossless(`{"estimated_shares":${bad}}`), ctx).estimatedShares).toBe(JSON.parse(bad));
  });

  it('numbers spelled as strings still pass: "12.5", "-3", "1e3", ".5"', () => {
    const s = summary(',"breakdown":[{"vault":"v","score":"12.5","volume":"1e3"},{"vault":"w","score":"-3","volume":".5"}]');
    expect(parseWalletSummary(parseJsonLossless(s), ADDR, ctx).breakdown.map((b) => [b.score, b.volume])).toEqual([['12.5', '1e3'], ['-3', '.5']]);
  });

  it(`JSON nested deeper than ${MAX_JSON_DEPTH} levels is refused before parsing; brackets inside strings do not count`, () => {
    const nest = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;
    expect(() => parseJsonLossless(nest(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJsonLossless(nest(MAX_JSON_DEPTH + 1))).toThrow(SyntaxError);
    expect(parseJsonLossless(`["${'['.repeat(1000)}\\"${'{'.repeat(1000)}"]`)).toHaveLength(1);
    expect(() => parseJsonLossless(summary(`,"x":${nest(3_000)}`))).toThrow(/nested deeper than/);
  });
});

describe('the count', () => {
  it('tried at least 10,000 malformed answers', () => {
    const total = Object.values(tried).reduce((a, b) => a + b, 0);
    expect(tried).toEqual(RUNS);
    expect(total).toBeGreaterThanOrEqual(10_000);
  });
});
