// A key file is read whole with the size its fstat gave, in one read where it can: the text must
// be the file's, whatever that size says (a file that grew after its fstat is still read whole).
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readWhole } from '../../src/api/keys.js';
import { tempDir } from '../e2e/helpers.js';

const { dir, cleanup } = tempDir('autoclaim-keyread-');
afterAll(cleanup);

function readAs(text: string, size: number): string {
  const file = join(dir, `k-${text.length}-${size}.json`);
  writeFileSync(file, text, { mode: 0o600 });
  const fd = openSync(file, 'r');
  try {
    return readWhole(fd, size) ?? "(over the limit)";
  } finally {
    closeSync(fd);
  }
}

describe('readWhole', () => {
  it.each([
    ['an empty file', ''],
    ['a key file', `[${Array.from({ length: 64 }, (_, i) => i * 3).join(',')}]\n`],
    ['a file larger than the reused buffer', `[${' '.repeat(5000)}1]`],
    ['non-ASCII text', 'é'.repeat(700)],
  ])('reads %s whole with its own size', (_name, text) => {
    expect(readAs(text, Buffer.byteLength(text))).toBe(text);
  });

  it('reads a file whole when it is larger than its fstat said (it grew)', () => {
    const text = 'x'.repeat(50_000); // more than the reused buffer has grown to here
    expect(readAs(text, 10)).toBe(text);
    expect(readAs(text, 0)).toBe(text);
  });

  it('leaves the reused buffer usable for a smaller file after a larger one', () => {
    expect(readAs('y'.repeat(9000), 9000)).toHaveLength(9000);
    expect(readAs('[1,2,3]', 7)).toBe('[1,2,3]');
  });
});
