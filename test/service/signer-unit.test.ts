// systemd/autoclaim-signer.service: no network, its own user, the socket's directory, and the
// sandboxing systemd-analyze measures (exposure at most 1.5, as the daemon's unit).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const UNIT = join(ROOT, 'systemd', 'autoclaim-signer.service');
const MAX_EXPOSURE = 1.5;
const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));

const text = readFileSync(UNIT, 'utf8');
const entries: Array<[string, string, string]> = [];
let section = '';
for (const raw of text.split('\n')) {
  const line = raw.trim();
  if (line === '' || line.startsWith('#')) continue;
  const header = /^\[(.+)\]$/.exec(line);
  if (header) section = header[1] ?? '';
  else if (line.includes('=')) entries.push([section, line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
}
const values = (key: string): string[] => entries.filter(([s, k]) => s === 'Service' && k === key).map(([, , v]) => v);
const one = (key: string): string | undefined => values(key).at(-1);

describe('systemd/autoclaim-signer.service, read statically', () => {
  it('runs `autoclaim signer` with signer.yaml from its own configuration directory', () => {
    expect(one('ExecStart')).toBe('/usr/bin/node -- /opt/autoclaim/dist/cli/main.js signer --config %E/autoclaim-signer/signer.yaml');
    expect(one('ConfigurationDirectory')).toBe('autoclaim-signer');
    expect(one('RestartPreventExitStatus')).toBe('78');
  });

  it('has no network: unix sockets only, every IP address denied', () => {
    expect(values('RestrictAddressFamilies')).toEqual(['AF_UNIX']);
    expect(one('IPAddressDeny')).toBe('any');
    expect(one('PrivateNetwork')).toBe('yes');
  });

  it('runs as its own user, its socket in /run/autoclaim-signer closed to others', () => {
    expect(one('User')).toBe('autoclaim-signer');
    expect(one('Group')).toBe('autoclaim-signer');
    expect(one('DynamicUser')).toBeUndefined();
    expect(one('RuntimeDirectory')).toBe('autoclaim-signer');
    // The group (the daemon's SupplementaryGroups=) may enter; others may not.
    expect(one('RuntimeDirectoryMode')).toBe('0750');
    expect(one('StateDirectoryMode')).toBe('0700');
    expect(one('UMask')).toBe('0077');
    expect(one('CapabilityBoundingSet')).toBe('');
    expect(one('NoNewPrivileges')).toBe('yes');
  });

  it('leaves no core dump, which would hold the keys it loaded', () => {
    expect(one('LimitCORE')).toBe('0');
  });
});

describe.skipIf(ANALYZE === undefined)('systemd/autoclaim-signer.service, checked by systemd-analyze', () => {
  const analyze = ANALYZE ?? 'systemd-analyze';

  it(`has an exposure of at most ${MAX_EXPOSURE}`, () => {
    const out = execFileSync(analyze, ['security', '--offline=true', '--no-pager', UNIT], { cwd: ROOT, encoding: 'utf8' });
    const m = /Overall exposure level for autoclaim-signer\.service: ([0-9]+\.[0-9])/.exec(out);
    expect(m, out).not.toBeNull();
    expect(Number(m?.[1])).toBeLessThanOrEqual(MAX_EXPOSURE);
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
