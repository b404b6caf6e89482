// The claim gap's model (model/claim-gap.pml, docs/reliability.md "The claim gap"): spin verifies
// that the protocol never applies a (wallet, epoch) claim twice, and finds the double claim in each
// variant that breaks one part of it (so the model can fail). Needs spin (Debian's `spin` package;
// .ci/run installs it) and gcc; without them those tests are skipped, saying why. The drift tests
// need neither: they hold the model's step states and transition names against the code's.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const MODEL = join(ROOT, 'model/claim-gap.pml');

function onPath(cmd: string, arg: string): boolean {
  return spawnSync(cmd, [arg], { stdio: 'ignore' }).error === undefined;
}

const HAVE_SPIN = onPath('spin', '-V') && onPath('gcc', '--version');
const WHY = HAVE_SPIN ? '' : ' [SKIPPED: spin or gcc is not on PATH; install them (apt-get install spin gcc) to run these]';
// Said out loud: a skipped file is easy to miss in a green run.
if (!HAVE_SPIN) console.warn(`test/model/claim-gap.test.ts:${WHY}`);

interface PanResult {
  errors: number | undefined;
  states: number | undefined;
  assertion: boolean;
  output: string;
}

/** spin -a, gcc, ./pan (exhaustive, safety only) in a directory of its own. */
function verify(flags: string[]): PanResult {
  const dir = mkdtempSync(join(tmpdir(), 'autoclaim-spin-'));
  try {
    copyFileSync(MODEL, join(dir, 'claim-gap.pml'));
    const steps: Array<[string, string[]]> = [
      ['spin', ['-a', ...flags, 'claim-gap.pml']],
      // -O0: the compile takes a second, and pan is no slower (it spends its time hashing states).
      ['gcc', ['-w', '-O0', '-DSAFETY', '-o', 'pan', 'pan.c']],
      ['./pan', ['-m1000000']],
    ];
    let output = '';
    for (const [cmd, args] of steps) {
      const r = spawnSync(cmd, args, { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      output += `$ ${cmd} ${args.join(' ')}\n${r.stdout}${r.stderr}`;
      if (r.status !== 0 && cmd !== './pan') throw new Error(`${cmd} failed (${r.status}):\n${output}`);
    }
    const errors = /errors: (\d+)/.exec(output)?.[1];
    const states = /(\d+) states, stored/.exec(output)?.[1];
    return {
      errors: errors === undefined ? undefined : Number(errors),
      states: states === undefined ? undefined : Number(states),
      assertion: output.includes('assertion violated (applied<=1)'),
      output,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Each breaks one part of the protocol; the model's header says which. Spin must find a double claim.
const BROKEN: Array<{ flags: string[]; what: string }> = [
  { flags: ['-DAGE_BELOW_WINDOW'], what: '"not applied" judged at an age below the service\'s window' },
  { flags: ['-DM=0'], what: 'a margin below the database/service clock error' },
  { flags: ['-DJUDGE_LOCAL_CLOCK'], what: "the age measured on the judging daemon's own unchecked clock" },
  { flags: ['-DSUMMARY_FIRST'], what: "the summary read before the database's now()" },
  { flags: ['-DSTATE_GUARD_ONLY'], what: 'writes out of sending/unknown guarded by the state, not the request' },
  { flags: ['-DASSUME_COMMIT'], what: 'a lost COMMIT answer to markSending taken as committed' },
  { flags: ['-DDUPLICATES'], what: 'a wire that delivers a request twice, with 429 trusted as "never applied"' },
];

describe(`the claim-gap model under spin${WHY}`, () => {
  it.skipIf(!HAVE_SPIN)('verifies: no (wallet, epoch) claim applied twice, over every interleaving', () => {
    const r = verify([]);
    expect(r.errors, r.output).toBe(0);
    expect(r.assertion).toBe(false);
    // A model that stopped early or reached nothing would "verify" too: it explores millions of states.
    expect(r.states ?? 0, r.output).toBeGreaterThan(1_000_000);
    expect(r.output).not.toContain('Search not completed');
  }, 300_000);

  for (const { flags, what } of BROKEN) {
    it.skipIf(!HAVE_SPIN)(`finds the double claim with ${flags.join(' ')}: ${what}`, () => {
      const r = verify(flags);
      expect(r.assertion, r.output).toBe(true);
      expect(r.errors).toBe(1);
    }, 300_000);
  }
});

// ------------------------------------------------------------------------------------------------
// drift: the model names the code's states and store methods, and only those

const model = readFileSync(MODEL, 'utf8');

/** The string literals of `export type NAME = 'a' | 'b' ...;` in a source file. */
function unionMembers(source: string, name: string): string[] {
  const m = new RegExp(`export type ${name} =([^;]+);`).exec(source);
  if (m === null) throw new Error(`no type ${name}`);
  return [...m[1]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!);
}

/** The methods declared in `export interface NAME { ... }` (one per line, two-space indent). */
function interfaceMethods(source: string, name: string): string[] {
  const start = source.indexOf(`export interface ${name} {`);
  if (start < 0) throw new Error(`no interface ${name}`);
  const body = source.slice(start, source.indexOf('\n}\n', start));
  return [...body.matchAll(/^ {2}(\w+)\(/gm)].map((x) => x[1]!);
}

const modelStates = (() => {
  const m = /mtype = \{([^}]+)\};\s*\/\* StepState \*\//.exec(model);
  if (m === null) throw new Error('the model declares no StepState mtype');
  return m[1]!.split(',').map((s) => s.trim());
})();
const modelActions = [...model.matchAll(/^inline (\w+)\(/gm)].map((x) => x[1]!);

describe("the claim-gap model names the code's states and actions", () => {
  const codeStates = unionMembers(readFileSync(join(ROOT, 'src/domain.ts'), 'utf8'), 'StepState');
  const storeMethods = interfaceMethods(readFileSync(join(ROOT, 'src/store/port.ts'), 'utf8'), 'SyncStore');

  it("has the step states of src/domain.ts's StepState, no more and no fewer", () => {
    expect(codeStates.length).toBeGreaterThan(3);
    expect([...modelStates].sort()).toEqual([...codeStates].sort());
  });

  it('names each of its transitions after a method of the store port (src/store/port.ts)', () => {
    expect(storeMethods).toContain('markSending');
    for (const action of modelActions) expect(storeMethods, `the model's inline ${action}`).toContain(action);
  });

  it('models the transitions the claim gap turns on, and uses each it defines', () => {
    const claimed = ['markSending', 'markNotSent', 'markUnknown', 'markAcknowledged', 'markFailed', 'reconcile', 'recoverInFlight'];
    expect([...modelActions].sort()).toEqual([...claimed].sort());
    for (const action of modelActions) {
      const uses = model.match(new RegExp(`\\b${action}\\(`, 'g'))?.length ?? 0;
      expect(uses, `${action} is defined but never taken`).toBeGreaterThan(1);
    }
  });

  it('uses no state name in a transition that it does not declare', () => {
    // st = NAME / st == NAME: every state the model moves a step to or tests is declared.
    const used = new Set([...model.matchAll(/\bst\s*==?\s*(\w+)/g)].map((x) => x[1]!));
    for (const s of used) expect(modelStates, `st = ${s}`).toContain(s);
  });

  it("lists in its header exactly the broken variants this test runs", () => {
    const header = model.slice(0, model.indexOf('*/'));
    const listed = [...header.matchAll(/^ \*\s{3}([A-Z_0-9]+)\s/gm)].map((x) => x[1]!);
    const run = BROKEN.flatMap((b) => b.flags).filter((f) => !f.includes('=')).map((f) => f.slice(2));
    expect([...listed].sort()).toEqual([...run].sort());
  });
});
