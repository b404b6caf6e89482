// The examples' schema modeline survives installation (issue 13): it names the schema relative to
// the file, and the documented install puts `autoclaim schema` beside the copied config, so an
// editor opening /etc/autoclaim/autoclaim.yaml still finds (and validates against) the schema.
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { configJsonSchema } from '../../src/config/index.js';
import { TempDir } from './helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const MODELINE = /^# yaml-language-server: \$schema=(\S+)$/;
const examples = readdirSync(join(ROOT, 'config')).filter((f) => f.endsWith('.yaml'));

function schemaOf(file: string): string | undefined {
  const first = readFileSync(file, 'utf8').split('\n')[0] ?? '';
  const target = MODELINE.exec(first)?.[1];
  return target === undefined ? undefined : resolve(dirname(file), target);
}

describe('the schema modeline', () => {
  let dir: TempDir | undefined;
  afterEach(() => dir?.remove());

  it.each(examples)('config/%s names the schema beside it, which is the current schema', (name) => {
    const target = schemaOf(join(ROOT, 'config', name));
    expect(target).toBe(join(ROOT, 'config', 'autoclaim.schema.json'));
    expect(JSON.parse(readFileSync(target ?? '', 'utf8'))).toEqual(configJsonSchema());
  });

  it('the documented install copies the config and puts the schema beside it', () => {
    const ops = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    expect(ops).toContain('sudo install -m 0644 config/production.example.yaml /etc/autoclaim/autoclaim.yaml');
    expect(ops).toMatch(/main\.js schema \| sudo tee \/etc\/autoclaim\/autoclaim\.schema\.json/);
  });

  it('after such an install, the copied modeline resolves and the copy validates against it', () => {
    dir = new TempDir();
    const etc = dir.path;
    copyFileSync(join(ROOT, 'config', 'production.example.yaml'), join(etc, 'autoclaim.yaml'));
    writeFileSync(join(etc, 'autoclaim.schema.json'), JSON.stringify(configJsonSchema(), null, 2)); // `autoclaim schema`
    const target = schemaOf(join(etc, 'autoclaim.yaml'));
    expect(target).toBe(join(etc, 'autoclaim.schema.json'));
    expect(existsSync(target ?? '')).toBe(true);
    const validate = new Ajv2020({ strict: true }).compile(JSON.parse(readFileSync(target ?? '', 'utf8')) as object);
    expect(validate(parse(readFileSync(join(etc, 'autoclaim.yaml'), 'utf8'))), JSON.stringify(validate.errors)).toBe(true);
  });
});
