// Mutations of a YAML text for fuzzing the config pipeline: characters YAML gives meaning to,
// lines doubled, dropped, swapped or tab-indented, values of another type.
import fc from 'fast-check';

const ODD = ['\t', ':', '-', ' ', '\n', '{', '}', '[', ']', '&', '*', '!', '|', '>', '"', "'", '#', '%', '@', '`', ',', '?', '<<', '\r', '\u00a0', '\u2028', 'é', '\ufeff', '0', 'x', '\\'];
const VALUES = ['[]', '{}', '"text"', '123', '-1', '0', '1e309', '.nan', '.inf', 'true', 'null', '~', '0x1F', '2025-01-01', '*nowhere', '&a x', '!!binary aGVsbG8=', '"50%"', '- x', '|\n  block', '{ a: 1, a: 2 }', '[1, [2, [3]]]', `"${'9'.repeat(40)}"`, '!!js/function "f(){}"'];

type Mutation =
  | { kind: 'delete'; at: number; len: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'replace'; at: number; text: string }
  | { kind: 'tab'; line: number }
  | { kind: 'dupLine'; line: number }
  | { kind: 'dropLine'; line: number }
  | { kind: 'swapLines'; line: number; other: number }
  | { kind: 'swapType'; line: number; value: string };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: fc.oneof(fc.constantFrom(...ODD), fc.string({ maxLength: 4 })) }),
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), text: fc.oneof(fc.constantFrom(...ODD), fc.string({ minLength: 1, maxLength: 2 })) }),
  fc.record({ kind: fc.constant('tab' as const), line: fc.nat() }),
  fc.record({ kind: fc.constant('dupLine' as const), line: fc.nat() }),
  fc.record({ kind: fc.constant('dropLine' as const), line: fc.nat() }),
  fc.record({ kind: fc.constant('swapLines' as const), line: fc.nat(), other: fc.nat() }),
  fc.record({ kind: fc.constant('swapType' as const), line: fc.nat(), value: fc.constantFrom(...VALUES) }),
);

function mutate(text: string, m: Mutation): string {
  const at = (n: number) => (text.length === 0 ? 0 : n % (text.length + 1));
  const lines = text.split('\n');
  const li = (n: number) => n % lines.length;
  switch (m.kind) {
    case 'delete':
      return text.slice(0, at(m.at)) + text.slice(at(m.at) + m.len);
    case 'insert':
      return text.slice(0, at(m.at)) + m.text + text.slice(at(m.at));
    case 'replace':
      return text.slice(0, at(m.at)) + m.text + text.slice(at(m.at) + 1);
    case 'tab':
      lines[li(m.line)] = `\t${lines[li(m.line)] ?? ''}`;
      return lines.join('\n');
    case 'dupLine':
      lines.splice(li(m.line), 0, lines[li(m.line)] ?? '');
      return lines.join('\n');
    case 'dropLine':
      lines.splice(li(m.line), 1);
      return lines.join('\n');
    case 'swapLines': {
      const a = li(m.line);
      const b = li(m.other);
      [lines[a], lines[b]] = [lines[b] ?? '', lines[a] ?? ''];
      return lines.join('\n');
    }
    case 'swapType': {
      // A `key: value` line (list items too) gets a value of another type.
      const candidates = lines.map((l, i) => (/^\s*(- )?[\w-]+:\s*\S/.test(l) ? i : -1)).filter((i) => i >= 0);
      const target = candidates[m.line % Math.max(1, candidates.length)];
      if (target === undefined) return text;
      lines[target] = (lines[target] ?? '').replace(/^(\s*(?:- )?[\w-]+:\s*).*$/, (_all, head: string) => `${head}${m.value}`);
      return lines.join('\n');
    }
  }
}

/** The text after one to four mutations. */
export const mutatedArb = (base: string) => fc.array(mutationArb, { minLength: 1, maxLength: 4 }).map((ms) => ms.reduce(mutate, base));
