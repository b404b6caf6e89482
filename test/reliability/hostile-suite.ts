// The shape every hostile-*.test.ts file shares. One pass runs the file's share of the sequences
// and records, per invariant, the first run that broke it (without stopping, so one broken
// invariant does not hide another). Then each invariant has its own test: if the pass saw it
// broken, fast-check replays that run (same seed, same path) checking that invariant alone and
// shrinks it, so the failure shows a minimal sequence for exactly that invariant.
//
// Environment: HOSTILE_SEED (a number) replays a run (each run takes a new one, printed in the test
// names); HOSTILE_RUNS the total number of sequences over all files (2,000; 5,000 deep, see
// test/support/depth.ts); HOSTILE_SHRINK=0 reports the first failing run as is,
// HOSTILE_SHRINK=1 shrinks even invariants marked known-broken; HOSTILE_SHRINK_MS bounds a shrink.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeSequence, sequence, type Profile, type Sequence } from './hostile-grammar.js';
import { openHostileHarness, type HostileHarness } from './hostile-harness.js';
import { checkInvariants, explain, INVARIANTS, type InvariantId } from './hostile-invariants.js';
import { depth } from '../support/depth.js';
import { seedFrom } from '../support/prng.js';

export const TOTAL_RUNS = depth('HOSTILE_RUNS', { ci: 2_000, deep: 5_000 });
const BASE_SEED = seedFrom('HOSTILE_SEED');
/** auto: shrink what is not known to be broken; always (HOSTILE_SHRINK=1); never (HOSTILE_SHRINK=0). */
const SHRINK = process.env['HOSTILE_SHRINK'] === '1' ? 'always' : process.env['HOSTILE_SHRINK'] === '0' ? 'never' : 'auto';
const SHRINK_BUDGET_MS = Number(process.env['HOSTILE_SHRINK_MS'] ?? 8_000);

function fileSeed(label: string): number {
  let h = BASE_SEED | 0;
  for (const c of label) h = (Math.imul(h, 31) + c.charCodeAt(0)) | 0;
  return h;
}

/** Sequences print as readable text in fast-check's counterexamples. */
function printable(p: Profile): fc.Arbitrary<Sequence> {
  return sequence(p).map((s) => Object.assign(s, { [fc.toStringMethod]: () => `\n${describeSequence(s)}\n` }));
}

export interface SuiteOptions {
  label: string;
  /** What this file leans on, for the test names. */
  about: string;
  profile: Profile;
  /** This file's share of TOTAL_RUNS. */
  share: number;
  /** Invariants the current build is known to break (the test then expects the failure). */
  knownBroken?: readonly InvariantId[];
}

export function hostileSuite(opts: SuiteOptions): void {
  const runs = Math.max(1, Math.round(TOTAL_RUNS * opts.share));
  const seed = fileSeed(opts.label);
  const arbitrary = printable(opts.profile);
  const first = new Map<InvariantId, { index: number; text: string }>();
  const counts = new Map<InvariantId, number>();

  describe(`hostile server, ${opts.about} (seed ${seed})`, () => {
    let h: HostileHarness;
    beforeAll(async () => {
      h = await openHostileHarness(opts.label);
    });
    afterAll(async () => {
      await h.close();
    });

    it(`runs ${runs} sequences against the lying server, recording every broken invariant`, async () => {
      let index = 0;
      const started = performance.now();
      await fc.assert(
        fc.asyncProperty(arbitrary, async (seq) => {
          const outcome = await h.run(seq);
          const violations = checkInvariants(outcome);
          for (const v of violations) counts.set(v.id, (counts.get(v.id) ?? 0) + 1);
          for (const id of new Set(violations.map((v) => v.id))) {
            if (!first.has(id)) first.set(id, { index, text: explain(outcome, violations.filter((v) => v.id === id)) });
          }
          index += 1;
        }),
        { seed, numRuns: runs },
      );
      expect(index).toBe(runs);
      const summary = INVARIANTS.map((i) => `invariant ${i.id}: ${counts.get(i.id) ?? 0} violation(s)${first.has(i.id) ? ` (first in run ${first.get(i.id)?.index})` : ''}`);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(`[hostile ${opts.label}] seed ${seed}, ${runs} sequences in ${seconds}s\n${summary.join('\n')}`);
    }, 600_000);

    for (const inv of INVARIANTS) {
      const known = opts.knownBroken?.includes(inv.id) === true;
      (known ? it.fails : it)(`invariant ${inv.id}: ${inv.text}`, async () => {
        const f = first.get(inv.id);
        if (f === undefined) return;
        // Replay the first run that broke it, checking this invariant alone, and shrink it (within
        // a time budget; a build known to break it is not shrunk unless HOSTILE_SHRINK=1 asks).
        const shrink = SHRINK === 'always' || (SHRINK === 'auto' && !known);
        try {
          await fc.assert(
            fc.asyncProperty(arbitrary, async (seq) => {
              const outcome = await h.run(seq);
              const violations = checkInvariants(outcome).filter((v) => v.id === inv.id);
              if (violations.length > 0) throw new Error(explain(outcome, violations));
            }),
            { seed, path: String(f.index), endOnFailure: !shrink, numRuns: runs, interruptAfterTimeLimit: SHRINK_BUDGET_MS },
          );
        } catch (err) {
          // fast-check's own message first names the seed and path; the property's error (the
          // violations, the server's transcript and ledger, the journal) is its cause.
          const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : '';
          const replay = `replay: HOSTILE_SEED=${BASE_SEED} npx vitest run test/reliability/hostile-${opts.label}.test.ts (first broken in run ${f.index})`;
          throw new Error(`invariant ${inv.id} broken (${counts.get(inv.id) ?? 0} time(s) in ${runs} runs):\n${cause}\n${replay}\n${err instanceof Error ? err.message : String(err)}`);
        }
        // The replay did not reproduce it (timing): report the run as the pass saw it.
        throw new Error(`run ${f.index} broke invariant ${inv.id} but its replay did not:\n${f.text}`);
      }, 300_000);
    }

    (opts.knownBroken?.includes(4) === true ? it.fails : it)('no piece of a secret in the raw bytes of any state file (.db, -wal, -shm)', () => {
      h.scanFiles();
      expect(h.fileLeaks).toEqual([]);
    });
  });
}
