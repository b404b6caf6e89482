// No source file over 400 lines (issue 14): a file that long is doing more than one thing, and the
// next change to it is harder to review than it needs to be. Split by concern, not by line count.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
const MAX_LINES = 400;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

it(`keeps every file under src/ at ${MAX_LINES} lines or fewer`, () => {
  const files = sources(SRC);
  expect(files.length).toBeGreaterThan(100);
  const long = files
    .map((f) => ({ file: relative(SRC, f), lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
    .filter((f) => f.lines > MAX_LINES);
  expect(long).toEqual([]);
});
