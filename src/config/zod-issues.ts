// Turns zod's issues into what an operator reads: one message per place, in plain words, with the
// key path zod found. Unions are the hard part: zod reports every branch's failure, so we pick the
// branch the operator evidently meant, or say what the choices are.
import type { z } from 'zod';
import { allowedKeysAt, configJsonSchema, type JsonSchema } from './json-schema.js';
import { pathStartsWith, type IssueList, type Path, type PathSegment } from './positions.js';
import { keyShown } from './shown-key.js';

type Issue = z.core.$ZodIssue;
type RawIssue = z.core.$ZodRawIssue;

interface SchemaProblem {
  path: PathSegment[];
  message: string;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a map',
  record: 'a map',
};

/** What a YAML value is, in words; never the value itself, which could be a pasted secret. */
export function describeValue(v: unknown): string {
  if (v === null) return 'nothing (an empty value)';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return 'a non-finite number';
    return Number.isInteger(v) ? 'a whole number' : 'a number';
  }
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'object') return 'a map';
  return typeof v;
}

const YAML11_BOOLEANS = /^(yes|no|on|off|y|n)$/i;
/** `max_sol_per_action:100`, or a no-break space after the colon: one string to YAML, not a key and value. */
const NO_SPACE_AFTER_COLON = /^[A-Za-z_][A-Za-z0-9_.-]*:(?![ \t\n]|$)/;

/** The per-parse error map: messages for every issue the schema did not word itself. */
export function errorMap(iss: RawIssue): string | undefined {
  switch (iss.code) {
    case 'invalid_type': {
      if (iss.input === undefined) return 'required';
      const expected = EXPECTED[iss.expected] ?? iss.expected;
      const hint =
        iss.expected === 'boolean' && typeof iss.input === 'string' && YAML11_BOOLEANS.test(iss.input)
          ? ' (write true or false)'
          : (iss.expected === 'object' || iss.expected === 'record') && typeof iss.input === 'string' && NO_SPACE_AFTER_COLON.test(iss.input)
            ? ' (a key with no plain space after its colon: YAML reads `key:100` or a no-break space as text)'
            : '';
      return `expected ${expected}, got ${describeValue(iss.input)}${hint}`;
    }
    case 'too_small':
      return iss.origin === 'array'
        ? `needs at least ${iss.minimum} item${Number(iss.minimum) === 1 ? '' : 's'}`
        : iss.origin === 'string'
          ? 'must not be empty'
          : iss.inclusive
            ? `must be at least ${iss.minimum}`
            : `must be greater than ${iss.minimum}`;
    case 'too_big':
      return iss.origin === 'array'
        ? `takes at most ${iss.maximum} items`
        : iss.inclusive
          ? `must be at most ${iss.maximum}`
          : `must be less than ${iss.maximum}`;
    case 'invalid_value':
      return iss.values.length === 1
        ? `expected ${JSON.stringify(iss.values[0])}`
        : `expected one of ${iss.values.map((v) => String(v)).join(', ')}`;
    case 'invalid_format':
      return 'has the wrong format';
    // A union (a step's amount: a number, a decimal, a percent or "all") left out: whenPresent
    // words only a wrong value, and zod's own default for the missing one is "Invalid input".
    case 'invalid_union':
      return iss.input === undefined ? 'required' : undefined;
    default:
      return undefined;
  }
}

/**
 * Flattens zod's issues into problems at full paths. `data` is what was validated, used to tell
 * a branch the operator meant (its keys were accepted) from one they did not.
 * `allowedKeys(path)` lists the keys a map at `path` takes, for "did you mean" hints.
 */
function schemaProblems(
  issues: readonly Issue[],
  data: unknown,
  allowedKeys: (path: Path) => string[],
): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  const visit = (list: readonly Issue[], base: PathSegment[]): void => {
    for (const issue of list) {
      const path = [...base, ...(issue.path as PathSegment[])];
      if (issue.code === 'unrecognized_keys') {
        for (const key of issue.keys) {
          out.push({ path: [...path, key], message: unknownKeyMessage(key, allowedKeys(path)) });
        }
      } else if (issue.code === 'invalid_union' && issue.errors.length > 0) {
        const branch = likelyBranch(issue.errors, valueAt(data, path));
        if (branch) visit(branch, path);
        else out.push({ path, message: issue.message });
      } else {
        out.push({ path, message: issue.message });
      }
    }
  };
  visit(issues, []);
  return out;
}

/**
 * The branch whose shape the value matches: a map branch that accepted some of the value's keys,
 * or the only scalar branch of the value's type. Undefined when none or several fit.
 */
function likelyBranch(branches: readonly (readonly Issue[])[], value: unknown): readonly Issue[] | undefined {
  const scores = branches.map((issues) => branchScore(issues, value));
  const best = Math.max(...scores);
  if (best <= 0 || scores.filter((s) => s === best).length !== 1) return undefined;
  return branches[scores.indexOf(best)];
}

function branchScore(issues: readonly Issue[], value: unknown): number {
  const atRoot = issues.filter((i) => i.path.length === 0);
  if (atRoot.some((i) => i.code === 'invalid_type' || i.code === 'invalid_value')) return 0;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const rejected = new Set(atRoot.flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys : [])));
    const accepted = Object.keys(value).filter((k) => !rejected.has(k)).length;
    return accepted === 0 ? 0 : 1 + accepted;
  }
  return 1;
}

function valueAt(data: unknown, path: Path): unknown {
  let v = data;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[seg];
  }
  return v;
}

function unknownKeyMessage(key: string, allowed: string[]): string {
  // A setting's name with a look-alike letter, a zero-width or a non-breaking space in it looks
  // right and is unknown; only the name it was meant to be is quoted (the key itself is not shown).
  const visible = key.replace(/[^\x21-\x7e]/g, '');
  if (visible !== key && visible !== '') {
    const meant = allowed.includes(visible) ? visible : closest(visible, allowed);
    if (meant !== undefined) return `unknown key: "${meant}" written with an invisible or non-ASCII character in it (a look-alike letter, a zero-width, non-breaking or padding space, a tab); retype it`;
  }
  if (!keyShown(key)) return 'unknown key, not shown because it looks like a secret: if it is one, remove it and rotate it (secrets never live in the YAML)';
  const near = closest(key, allowed);
  if (near) return `unknown key "${key}" (did you mean "${near}"?)`;
  if (allowed.length > 0 && allowed.length <= 12) return `unknown key "${key}"; expected one of ${allowed.join(', ')}`;
  return `unknown key "${key}"`;
}

function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  const tolerance = Math.max(1, Math.floor(word.length / 4));
  return bestDistance <= tolerance ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** The config's JSON Schema, for "did you mean" hints: made once, on the first problem. */
let hintSchema: JsonSchema | undefined;

/**
 * Files zod's issues about `value`, found at `base` in the config (the whole file, or one line of
 * a wallets_file), as errors at their places. A key already flagged as a literal secret gets no
 * second message.
 */
export function reportSchemaProblems(
  issues: IssueList,
  zodIssues: readonly Issue[],
  value: unknown,
  base: Path,
  flagged: readonly Path[],
  /** The JSON Schema the hints come from, for another file than autoclaim's config (signer.yaml). */
  hints?: JsonSchema,
): void {
  const schema = hints ?? (hintSchema ??= configJsonSchema());
  for (const p of schemaProblems(zodIssues, value, (sub) => allowedKeysAt(schema, [...base, ...sub]))) {
    const full = [...base, ...p.path];
    if (!flagged.some((f) => pathStartsWith(full, f))) issues.error(full, p.message);
  }
}
