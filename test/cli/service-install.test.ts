// `service install` writes the unit, its directories and a config skeleton under a root, changes
// nothing when run again, never overwrites a config; `status --service` reads the state where the
// installed unit keeps it (issue 27).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packageRoot, renderUnit, servicePaths } from '../../src/cli/commands/service.js';
import { systemClock } from '../../src/domain.js';
import { silentLogger } from '../../src/log/logger.js';
import { openStore } from '../../src/store/index.js';
import { configYaml, makeWallets, REPO, runCli, tempDir } from '../e2e/helpers.js';

const TEMPLATE = readFileSync(join(REPO, 'systemd', 'autoclaim.service'), 'utf8');
const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));

describe('renderUnit', () => {
  it('points ExecStart at this node and this package, and changes nothing else without --user', () => {
    const unit = renderUnit(TEMPLATE, { node: '/usr/local/bin/node', packageRoot: '/usr/lib/node_modules/autoclaim' });
    expect(unit).toContain('\nExecStart=/usr/local/bin/node --max-semi-space-size=1 -- /usr/lib/node_modules/autoclaim/dist/cli/main.js run --config %E/autoclaim/autoclaim.yaml\n');
    const body = unit.split('\n').filter((l) => !l.startsWith('# Written by') && !l.startsWith('# Change it with'));
    const template = TEMPLATE.split('\n').filter((l) => !l.startsWith('ExecStart='));
    expect(body.filter((l) => !l.startsWith('ExecStart='))).toEqual(template);
  });

  it('--user replaces DynamicUser=yes with that fixed account', () => {
    const unit = renderUnit(TEMPLATE, { node: '/usr/bin/node', packageRoot: '/opt/autoclaim', user: 'autoclaim' });
    expect(unit).not.toMatch(/^DynamicUser=yes$/m);
    expect(unit).toMatch(/^DynamicUser=no\nUser=autoclaim\nGroup=autoclaim$/m);
  });

  it('refuses a user name or a path systemd would read otherwise', () => {
    expect(() => renderUnit(TEMPLATE, { node: '/usr/bin/node', packageRoot: '/opt/autoclaim', user: 'root;rm' })).toThrow(/not a valid user name/);
    expect(() => renderUnit(TEMPLATE, { node: '/usr/bin/node', packageRoot: '/opt/my autoclaim' })).toThrow(/quoted/);
    expect(() => renderUnit(TEMPLATE, { node: '/usr/bin/node', packageRoot: '/opt/%i' })).toThrow(/quoted/);
  });
});

describe('servicePaths', () => {
  it("reads the unit's --config (%E is /etc), StateDirectory= and credentials folder, under the root", () => {
    const p = servicePaths(TEMPLATE, '/r', '/r/etc/systemd/system/autoclaim.service');
    expect(p.configFile).toBe('/r/etc/autoclaim/autoclaim.yaml');
    // DynamicUser=yes and no /var/lib/autoclaim symlink: the real folder under private/.
    expect(p.stateDirectory).toBe('/r/var/lib/private/autoclaim');
    expect(p.credentialsDirectory).toBe('/r/etc/autoclaim/credentials');
    const fixed = renderUnit(TEMPLATE, { node: '/usr/bin/node', packageRoot: '/opt/autoclaim', user: 'ac' });
    expect(servicePaths(fixed, '/r', 'x').stateDirectory).toBe('/r/var/lib/autoclaim');
  });
});

describe('service install --root', () => {
  let root: string;
  let cleanup: () => void;
  beforeEach(() => ({ dir: root, cleanup } = tempDir('autoclaim-service-')));
  afterEach(() => cleanup());

  const install = (...args: string[]) => runCli(['service', 'install', '--root', root, ...args], { cwd: root });

  it('writes the unit, the directories, the skeleton and the schema; a second run changes nothing', async () => {
    const first = await install();
    expect(first.code, first.stderr).toBe(0);
    const unitFile = join(root, 'etc/systemd/system/autoclaim.service');
    const unit = readFileSync(unitFile, 'utf8');
    expect(unit).toContain(`ExecStart=${process.execPath} --max-semi-space-size=1 -- ${packageRoot()}/dist/cli/main.js run --config %E/autoclaim/autoclaim.yaml`);
    expect(statSync(join(root, 'etc/autoclaim')).mode & 0o777).toBe(0o755);
    expect(statSync(join(root, 'etc/autoclaim/credentials')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(root, 'etc/autoclaim/autoclaim.yaml'), 'utf8')).toBe(readFileSync(join(REPO, 'config/production.example.yaml'), 'utf8'));
    expect(readFileSync(join(root, 'etc/autoclaim/autoclaim.schema.json'), 'utf8')).toBe(readFileSync(join(REPO, 'config/autoclaim.schema.json'), 'utf8'));
    // systemd creates the state directory itself, owned by the (dynamic) user.
    expect(existsSync(join(root, 'var'))).toBe(false);

    const second = await install();
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^unchanged .*autoclaim\.service$/m);
    expect(second.stdout).toMatch(/^kept .*autoclaim\.yaml \(an existing config is never overwritten\)$/m);
    expect(second.stdout).not.toMatch(/^(wrote|created|updated)/m);
    expect(readFileSync(unitFile, 'utf8')).toBe(unit);
  });

  it('never overwrites an existing config, and rewrites the unit for --user', async () => {
    mkdirSync(join(root, 'etc/autoclaim'), { recursive: true });
    writeFileSync(join(root, 'etc/autoclaim/autoclaim.yaml'), 'mine: true\n');
    const r = await install('--user', 'autoclaim');
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(root, 'etc/autoclaim/autoclaim.yaml'), 'utf8')).toBe('mine: true\n');
    expect(readFileSync(join(root, 'etc/systemd/system/autoclaim.service'), 'utf8')).toMatch(/^User=autoclaim$/m);
    expect(r.stdout).toContain('useradd --system');
  });

  it('a bad --user is a usage error (exit 2) and writes nothing', async () => {
    const r = await install('--user', 'Bad User');
    expect(r.code).toBe(2);
    expect(existsSync(join(root, 'etc'))).toBe(false);
  });

  it.skipIf(ANALYZE === undefined)('systemd-analyze verify passes on the written unit, and its exposure stays at most 1.5', async () => {
    for (const user of [[], ['--user', 'autoclaim']]) {
      expect((await install(...user)).code).toBe(0);
      const unitFile = join(root, 'etc/systemd/system/autoclaim.service');
      const verify = spawnSync(ANALYZE!, ['verify', unitFile], { encoding: 'utf8' });
      expect(verify.status, verify.stdout + verify.stderr).toBe(0);
      expect(`${verify.stdout}${verify.stderr}`.trim()).toBe('');
      const security = spawnSync(ANALYZE!, ['security', '--offline=true', '--threshold=15', '--no-pager', unitFile], { encoding: 'utf8' });
      expect(security.status, security.stdout + security.stderr).toBe(0);
    }
  });

  it('status --service reads the config, state directory and credentials the installed unit uses', async () => {
    expect((await install()).code).toBe(0);
    const wallets = makeWallets(root, ['alpha']);
    // The keys sit beside the config, where the skeleton's relative paths would find them.
    const yaml = configYaml({ baseUrl: 'http://127.0.0.1:9/v1', wallets }).replace('state:\n  path: ./state/autoclaim.db\n', '');
    writeFileSync(join(root, 'etc/autoclaim/autoclaim.yaml'), yaml.replaceAll('./keys/', `${root}/keys/`));

    const none = await runCli(['status', '--service', '--root', root], { cwd: '/' });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toContain(`no state file at ${join(root, 'var/lib/private/autoclaim/autoclaim.db')}`);

    const store = openStore(join(root, 'var/lib/private/autoclaim/autoclaim.db'), { logger: silentLogger(), clock: systemClock });
    store.close();
    const json = await runCli(['status', '--service', '--root', root, '--json'], { cwd: '/' });
    expect(json.code, json.stderr).toBe(0);
    const body = JSON.parse(json.stdout) as { wallets: Array<{ wallet: string }>; note: string };
    expect(body.wallets.map((w) => w.wallet)).toEqual(['alpha']);
    expect(body.note).toBe('no polls yet: the daemon has not polled any of these wallets');

    const usage = await runCli(['status', '--root', root], { cwd: '/' });
    expect(usage.code).toBe(2);
  });
});
