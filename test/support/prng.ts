// mulberry32: a small seeded PRNG, so a random test can be replayed from its seed. Good enough to
// pick kill moments and build keys; not for anything secret. (bench/lib/common.mjs has the same
// generator for the benchmarks, which run without TypeScript.)
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A run's seed: `$name` when set (to replay a run), else a new one from the time. The test prints
 * it (in its title or failure messages) so a failure can be replayed with `name=<seed>`.
 */
export function seedFrom(name: string): number {
  const given = process.env[name];
  if (given !== undefined && given !== '') {
    const seed = Number(given);
    if (!Number.isSafeInteger(seed)) throw new Error(`${name}=${given} is not an integer seed`);
    return seed;
  }
  return Date.now() % 2 ** 31;
}
