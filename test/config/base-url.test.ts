// Plain http only to this machine (issue 11, item 11): the bearer and the signatures of every signed
// request cross the wire with it. Loopback is decided by parsing the address, never by how the
// host name begins, so 10.evil.example.com and 127.attacker.example are remote hosts.
import { writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configYaml, makeWallets, runCli, tempDir } from '../e2e/helpers.js';
import { BASE, TempDir, edit, formatted } from './helpers.js';

const refused = (host: string) =>
  `config.yaml:2:3 api.base_url: plain http is allowed only to this machine (127.0.0.0/8, ::1 or localhost), not ${host}: ` +
  'the API key and signatures would cross the network unencrypted; use https, or set api.allow_insecure_http: true';
const allowed = (host: string) =>
  `config.yaml:2:3 api.base_url: plain http to ${host}, which is not this machine, sends the API key and signatures ` +
  'unencrypted (allowed by api.allow_insecure_http); use https';

/** [base_url, host as the URL parser reads it, whether it is this machine] */
const HOSTS: Array<[string, string, boolean]> = [
  ['http://127.0.0.1:8787/v1', '127.0.0.1', true],
  ['http://127.1.2.3:8787/v1', '127.1.2.3', true],
  ['http://[::1]:8787/v1', '[::1]', true],
  ['http://[0:0:0:0:0:0:0:1]/v1', '[::1]', true],
  ['http://[::ffff:127.0.0.1]:8787/v1', '[::ffff:7f00:1]', true],
  ['http://localhost:8787/v1', 'localhost', true],
  // Host names are case-insensitive; the URL parser lower-cases them before anyone looks.
  ['http://LOCALHOST:8787/v1', 'localhost', true],
  // The URL parser reads these as 127.0.0.1, and so does the HTTP client that connects to it.
  ['http://0x7f000001:8787/v1', '127.0.0.1', true],
  ['http://2130706433/v1', '127.0.0.1', true],
  ['http://127.1/v1', '127.0.0.1', true],
  ['http://10.0.0.1:8787/v1', '10.0.0.1', false],
  ['http://192.168.1.1:8787/v1', '192.168.1.1', false],
  ['http://172.16.0.1/v1', '172.16.0.1', false],
  ['http://0.0.0.0:8787/v1', '0.0.0.0', false],
  ['http://[::]:8787/v1', '[::]', false],
  ['http://[::ffff:10.0.0.1]/v1', '[::ffff:a00:1]', false],
  ['http://10.evil.example.com/v1', '10.evil.example.com', false],
  ['http://127.attacker.example/v1', '127.attacker.example', false],
  ['http://localhost.evil.com/v1', 'localhost.evil.com', false],
  ['http://localhost./v1', 'localhost.', false],
  ['http://sandbox:8787/v1', 'sandbox', false],
  ['http://rewards.local/v1', 'rewards.local', false],
];

describe('api.base_url over plain http', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(() => dir.remove());

  const load = (url: string, extra = '') => {
    dir.write('config.yaml', edit(BASE, 'http://127.0.0.1:8787/v1', `${url}${extra}`));
    return dir.load('config.yaml');
  };

  it.each(HOSTS)('%s (host %s): allowed without the option only when it is this machine (%s)', (url, host, local) => {
    const result = load(url);
    expect(formatted(result)).toEqual({ errors: local ? [] : [refused(host)], warnings: [] });
    expect(result.config === undefined).toBe(!local);
  });

  it.each(HOSTS)('%s (host %s) with allow_insecure_http: a warning unless it is this machine (%s)', (url, host, local) => {
    const result = load(url, '\n  allow_insecure_http: true');
    expect(formatted(result)).toEqual({ errors: [], warnings: local ? [] : [allowed(host)] });
    expect(result.config?.api.baseUrl).toBe(url.replace(/\/+$/, ''));
  });

  it('allow_insecure_http: false is the default, written or not', () => {
    expect(formatted(load('http://10.0.0.1/v1', '\n  allow_insecure_http: false')).errors).toEqual([refused('10.0.0.1')]);
  });

  it('https and the in-process sandbox need no option, whatever the host', () => {
    for (const url of ['https://10.0.0.1/v1', 'https://127.attacker.example/v1', 'sandbox']) {
      expect(formatted(load(url))).toEqual({ errors: [], warnings: [] });
    }
  });

  it('is refused at the line of base_url in the file that holds it', () => {
    dir.write('config.yaml', `# a comment first\n\n${edit(BASE, 'http://127.0.0.1:8787/v1', 'http://10.evil.example.com/v1')}`);
    const { errors } = formatted(dir.load('config.yaml'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^config\.yaml:4:3 api\.base_url: plain http is allowed only to this machine/);
  });
});

describe('api.base_url with a query or a fragment, even an empty one', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(() => dir.remove());

  // The URL parser reads `v1?` and `v1#` as having no query and no fragment (both empty), but the
  // base is joined to each operation's path as text: with `v1#` the path after the `#` never leaves
  // this machine, so every operation went to POST /v1 (a deposit and a mint one request to the
  // server, the hole of "Two operations at one endpoint"; seen with the real client on loopback),
  // and with `v1?` every path went as the query of /v1.
  it.each(['http://127.0.0.1:8787/v1?', 'http://127.0.0.1:8787/v1#', 'http://127.0.0.1:8787/v1?x=1', 'https://api.example.com/v1#top'])(
    '%s is refused at its line',
    (url) => {
      dir.write('config.yaml', edit(BASE, 'http://127.0.0.1:8787/v1', url));
      const result = dir.load('config.yaml');
      expect(formatted(result).errors).toEqual(['config.yaml:2:3 api.base_url: the base URL takes no query or fragment']);
      expect(result.config).toBeUndefined();
    },
  );
});

describe('check and start refuse plain http to another host (exit 78)', () => {
  let root: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir: root, cleanup } = tempDir());
  });
  afterEach(() => cleanup());

  it.each(['check', 'once'])('%s exits 78 naming the file, line and key', async (command) => {
    const wallets = makeWallets(root, ['alpha']);
    const text = configYaml({ baseUrl: 'http://127.attacker.example:9/v1', wallets });
    const file = `${root}/autoclaim.yaml`;
    writeFileSync(file, text);
    const r = await runCli([command, '--config', file], { cwd: root });
    expect(r.code).toBe(78);
    const line = text.split('\n').findIndex((l) => l.includes('base_url:')) + 1;
    expect(r.stderr).toContain(`autoclaim.yaml:${line}:3 api.base_url: plain http is allowed only to this machine`);
    expect(r.stderr).toContain('127.attacker.example');
  });

  it('check passes with allow_insecure_http: true, warning about it', async () => {
    const wallets = makeWallets(root, ['alpha']);
    const text = configYaml({ baseUrl: 'http://10.0.0.1:9/v1', wallets, apiExtra: '  allow_insecure_http: true\n' });
    const file = `${root}/autoclaim.yaml`;
    writeFileSync(file, text);
    const r = await runCli(['check', '--config', file], { cwd: root });
    expect(r.code).toBe(0);
    expect(`${r.stdout}${r.stderr}`).toContain('allowed by api.allow_insecure_http');
  });
});

describe('metrics.listen', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = new TempDir();
  });
  afterEach(() => dir.remove());

  it.each([
    ['127.0.0.1:9464', false],
    ['[::1]:9464', false],
    ['localhost:9464', false],
    ['0.0.0.0:9464', true],
    ['127.attacker.example:9464', true],
    ['10.0.0.1:9464', true],
  ])('%s warns that it listens beyond this host: %s', (listen, warns) => {
    dir.write('config.yaml', `${BASE}metrics:\n  listen: "${listen}"\n`);
    expect(formatted(dir.load('config.yaml'))).toEqual({
      errors: [],
      warnings: warns ? ['config.yaml:17:3 metrics.listen: the metrics endpoint has no authentication and listens beyond this host'] : [],
    });
  });
});
