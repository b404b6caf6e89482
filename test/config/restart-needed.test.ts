// What a reload cannot change in a running daemon is said (config.restart_needed, with its key),
// and what it can change is not: one row a setting.
import { afterAll, describe, expect, it } from 'vitest';
import { warnRestartNeeded } from '../../src/config/restart-needed.js';
import type { AppConfig } from '../../src/domain.js';
import { captureLog } from '../support/log.js';
import { BASE, edit, TempDir } from './helpers.js';

const dir = new TempDir();
afterAll(() => dir.remove());

let n = 0;
function load(text: string): AppConfig {
  const name = `c${++n}.yaml`;
  dir.write(name, text);
  const r = dir.load(name);
  if (r.config === undefined) throw new Error(JSON.stringify(r.errors));
  return r.config;
}

const current = load(BASE);
const after = (from: string, to: string) => load(edit(BASE, from, to));

describe('a reload that changes what needs a restart', () => {
  it.each([
    ['api', after('v1\n', 'v1\n  timeout_ms: 9000\n')],
    ['state', after('safety:', 'state:\n  path: ./elsewhere.db\nsafety:')],
    ['state', after('safety:', 'state:\n  query_timeout: 9s\nsafety:')],
    ['state', after('safety:', 'state:\n  password_file: ./pw\nsafety:')],
    ['metrics', after('safety:', 'metrics:\n  listen: 127.0.0.1:9464\nsafety:')],
    ['log', after('safety:', 'log:\n  level: debug\nsafety:')],
  ])('says %s', (key, next) => {
    const log = captureLog();
    warnRestartNeeded(current, next, log.logger);
    expect(log.events('config.restart_needed').map((e) => e['key'])).toEqual([key]);
  });

  it('says nothing for what a reload applies in place (rules, limits, schedule)', () => {
    const log = captureLog();
    warnRestartNeeded(current, after('gte: 0.5', 'gte: 0.7'), log.logger);
    warnRestartNeeded(current, after('max_sol_per_action: 100', 'max_sol_per_action: 50'), log.logger);
    expect(log.events('config.restart_needed')).toEqual([]);
  });
});
