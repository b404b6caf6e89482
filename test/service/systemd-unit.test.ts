import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serviceEnv, serviceNodeFlags } from './node-flags.js';

const ROOT = join(import.meta.dirname, '..', '..');
const UNIT = join(ROOT, 'systemd', 'autoclaim.service');
const MAX_EXPOSURE = 1.5;

const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));

/** [section, key, value] for every assignment, comments dropped. */
function directives(text: string): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1] ?? '';
      continue;
    }
    const eq = line.indexOf('=');
    if (eq > 0) out.push([section, line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
  }
  return out;
}

const unitText = readFileSync(UNIT, 'utf8');
const all = directives(unitText);
const values = (key: string, section = 'Service'): string[] => all.filter(([s, k]) => s === section && k === key).map(([, , v]) => v);
const one = (key: string, section = 'Service'): string | undefined => values(key, section).at(-1);

describe('systemd/autoclaim.service, read statically', () => {
  it('is a notify service with a watchdog that only the main process may feed', () => {
    expect(one('Type')).toBe('notify');
    expect(one('NotifyAccess')).toBe('main');
    expect(one('WatchdogSec')).toMatch(/^[1-9][0-9]*s$/);
  });

  it('runs the package bin with the config from the configuration directory', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string>; scripts: Record<string, string> };
    const bin = pkg.bin['autoclaim'];
    expect(bin).toBe('dist/cli/main.js');
    // With a small young generation and two malloc arenas (the unit's comments say why); `npm
    // start` stays plain node.
    expect(serviceNodeFlags()).toEqual(['--max-semi-space-size=1']);
    expect(one('ExecStart')).toBe(`/usr/bin/node ${serviceNodeFlags().join(' ')} -- /opt/autoclaim/${bin} run --config %E/autoclaim/autoclaim.yaml`);
    expect(serviceEnv()).toEqual(['MALLOC_ARENA_MAX=2']);
    for (const v of serviceEnv()) expect(values('Environment')).toContain(v);
    expect(pkg.scripts['start']).toBe(`node -- ${bin} run`);
    // The README's first run quotes npm's banner, which prints the script as it is.
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain(`\n> ${pkg.name}@${pkg.version} start\n> ${pkg.scripts['start']}\n`);
    expect(one('ConfigurationDirectory')).toBe('autoclaim');
    expect(one('StateDirectory')).toBe('autoclaim');
  });

  it('reloads with SIGHUP and restarts on failure within a start limit', () => {
    expect(one('ExecReload')).toBe('/bin/kill -HUP $MAINPID');
    expect(one('Restart')).toBe('on-failure');
    expect(one('StartLimitBurst', 'Unit')).toMatch(/^[1-9][0-9]*$/);
    expect(one('StartLimitIntervalSec', 'Unit')).toBeDefined();
  });

  it('takes the API key as a credential and never as an environment variable', () => {
    expect(values('LoadCredential')).toContain('api_key:/etc/autoclaim/credentials/api_key');
    expect(values('Environment').join(' ')).not.toMatch(/API_KEY/i);
  });

  it('makes every credential optional with a SetCredential= default, so a missing file does not fail the unit', () => {
    // LoadCredential= of a missing file fails the start; with a SetCredential= of the same ID the
    // default stands in (systemd.exec(5)). An operator using $AUTOCLAIM_API_KEY or api_key_file,
    // or no webhook, gets a unit that starts.
    const loaded = values('LoadCredential').map((v) => v.slice(0, v.indexOf(':')));
    expect(loaded.sort()).toEqual(['api_key', 'state_password', 'webhook_secret', 'webhook_url']);
    const defaults = new Map(values('SetCredential').map((v) => [v.slice(0, v.indexOf(':')), v.slice(v.indexOf(':') + 1)]));
    for (const id of loaded) expect(defaults.get(id), id).toBe('\\n');
  });

  it('leaves MemoryDenyWriteExecute off, with the reason written down', () => {
    expect(values('MemoryDenyWriteExecute').filter((v) => /^(yes|true|1|on)$/i.test(v))).toEqual([]);
    expect(unitText).toMatch(/MemoryDenyWriteExecute=[^\n]*\n#[^\n]*JIT|MemoryDenyWriteExecute[^\n]*JIT/);
  });

  it('drops every capability and runs as a dynamic user with a private umask', () => {
    expect(one('CapabilityBoundingSet')).toBe('');
    expect(one('AmbientCapabilities')).toBe('');
    expect(one('DynamicUser')).toBe('yes');
    expect(one('UMask')).toBe('0077');
    expect(one('NoNewPrivileges')).toBe('yes');
  });

  it('leaves no core dump, which would hold the keys it loaded', () => {
    expect(one('LimitCORE')).toBe('0');
  });
});

describe.skipIf(ANALYZE === undefined)('systemd/autoclaim.service, checked by systemd-analyze', () => {
  const analyze = ANALYZE ?? 'systemd-analyze';

  it(`has an exposure of at most ${MAX_EXPOSURE}`, () => {
    const out = execFileSync(analyze, ['security', '--offline=true', '--no-pager', UNIT], { cwd: ROOT, encoding: 'utf8' });
    const m = /Overall exposure level for autoclaim\.service: ([0-9]+\.[0-9])/.exec(out);
    expect(m, out).not.toBeNull();
    expect(Number(m?.[1])).toBeLessThanOrEqual(MAX_EXPOSURE);
  });

  it('passes --threshold, the check systemd-analyze itself enforces', () => {
    // --threshold is on the 0–100 scale the text output divides by ten.
    const r = spawnSync(analyze, ['security', '--offline=true', `--threshold=${MAX_EXPOSURE * 10}`, '--no-pager', UNIT], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });

  it('verifies, apart from a node binary this machine may lack', () => {
    const r = spawnSync(analyze, ['verify', UNIT], { cwd: ROOT, encoding: 'utf8' });
    const complaints = `${r.stdout}\n${r.stderr}`
      .split('\n')
      .filter((l) => l.trim() !== '')
      .filter((l) => !/Command \/usr\/bin\/node is not executable/.test(l));
    expect(complaints).toEqual([]);
  });
});
