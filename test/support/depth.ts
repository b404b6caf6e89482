// How deep the chaos tests go. `npm test` (what CI runs) takes a share of each that keeps the whole
// suite inside CI's budget, under a new seed every run (printed), so runs add up to more ground than
// any one of them; `npm run test:deep` (AUTOCLAIM_TEST_DEPTH=deep) takes the depth each was
// written with, for a release or a change to the executor, the cluster or the API edge. An
// explicit count (HOSTILE_RUNS=…, AUTOCLAIM_CRASH_KILLS=…, FAILOVER_DISRUPTIONS=…) wins over both.
export const DEEP = process.env['AUTOCLAIM_TEST_DEPTH'] === 'deep';

export function depth(name: string, counts: { ci: number; deep: number }): number {
  const given = process.env[name];
  if (given !== undefined && given !== '') {
    const n = Number(given);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name}=${given} is not a positive count`);
    return n;
  }
  return DEEP ? counts.deep : counts.ci;
}
