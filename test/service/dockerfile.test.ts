// There is no Docker engine on these machines: what can be checked about the image is checked
// here, statically, against the same files `docker build` and `docker compose up` would read.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadKey, checkAddress } from '../../src/keys/keys.js';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { startHealthServer } from '../../src/service/health-server.js';
import { createMetrics } from '../../src/service/metrics.js';
import { serviceEnv, serviceNodeFlags } from './node-flags.js';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (f: string): string => readFileSync(join(ROOT, f), 'utf8');

/**
 * .dockerignore as Docker reads it (moby/patternmatcher): each line cleaned (a trailing `/` and a
 * leading `/` dropped), `*` and `?` within one path segment, `**` across any number of them, the
 * last matching line wins, and a path is excluded when it or a folder above it matches.
 */
function parseDockerignore(text: string): { exclude: boolean; re: RegExp }[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const exclude = !l.startsWith('!');
      const glob = (exclude ? l : l.slice(1)).trim().replace(/^\/+|\/+$/g, '');
      const body = glob
        .split(/(\*\*\/|\*\*|\*|\?)/)
        .map((t) => (t === '**/' ? '(?:.*/)?' : t === '**' ? '.*' : t === '*' ? '[^/]*' : t === '?' ? '[^/]' : t.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('');
      return { exclude, re: new RegExp(`^${body}$`) };
    });
}

function sentToBuild(file: string, rules: { exclude: boolean; re: RegExp }[]): boolean {
  const parts = file.split('/');
  const selves = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
  let excluded = false;
  for (const r of rules) if (selves.some((p) => r.re.test(p))) excluded = r.exclude;
  return !excluded;
}

interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name: string | undefined;
  body: Instruction[];
}

/** Instructions of a Dockerfile, with line continuations joined and comments dropped. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue; // a comment inside a continued instruction
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    if (full === '') continue;
    const m = /^(\S+)\s*(.*)$/.exec(full);
    if (m) out.push({ op: (m[1] ?? '').toUpperCase(), args: m[2] ?? '' });
  }
  return out;
}

function stages(all: Instruction[]): { args: Map<string, string>; stages: Stage[] } {
  const args = new Map<string, string>();
  const list: Stage[] = [];
  for (const i of all) {
    if (i.op === 'FROM') {
      const [from = '', , name] = i.args.split(/\s+/);
      list.push({ from, name, body: [] });
    } else if (list.length === 0 && i.op === 'ARG') {
      const [k = '', v = ''] = i.args.split('=');
      args.set(k, v);
    } else {
      list.at(-1)?.body.push(i);
    }
  }
  return { args, stages: list };
}

const docker = stages(instructions(read('Dockerfile')));
const runtime = docker.stages.at(-1);
const build = docker.stages[0];
const inRuntime = (op: string): Instruction[] => runtime?.body.filter((i) => i.op === op) ?? [];
const pkg = JSON.parse(read('package.json')) as { bin: Record<string, string> };
const baseImage = (from: string): string => from.replace(/^\$\{?(\w+)\}?$/, (_m, name: string) => docker.args.get(name) ?? from);

describe('Dockerfile', () => {
  it('is multi-stage, building in one stage and running in another of the same base', () => {
    expect(docker.stages.length).toBeGreaterThanOrEqual(2);
    expect(build?.name).toBe('build');
    expect(runtime?.name).toBe('runtime');
    expect(baseImage(runtime?.from ?? '')).toBe(baseImage(build?.from ?? ''));
  });

  it('builds on a slim image of a Node.js LTS line that still has support', () => {
    const image = baseImage(runtime?.from ?? '');
    const m = /^node:(\d+)(?:\.[\d.]+)?-(bookworm|trixie)-slim$/.exec(image);
    expect(m, image).not.toBeNull();
    const major = Number(m?.[1]);
    // Even majors become LTS; 20 reached end of life in April 2026.
    expect(major % 2).toBe(0);
    expect(major).toBeGreaterThanOrEqual(22);
  });

  it('compiles in the build stage and keeps only production dependencies', () => {
    const runs = build?.body.filter((i) => i.op === 'RUN').map((i) => i.args).join('\n') ?? '';
    expect(runs).toMatch(/python3/);
    expect(runs).toMatch(/g\+\+/);
    expect(runs).toMatch(/npm ci\b/);
    expect(runs).toMatch(/npm run build/);
    expect(runs).toMatch(/npm prune --omit=dev/);
    const runtimeRuns = inRuntime('RUN').map((i) => i.args).join('\n');
    expect(runtimeRuns).not.toMatch(/g\+\+|python3|npm (ci|install)/);
  });

  it('runs the package bin, dist/cli/main.js, with the node flags of the systemd unit, under tini as PID 1, with `run` as the default command', () => {
    const entry = JSON.parse(inRuntime('ENTRYPOINT').at(-1)?.args ?? 'null') as string[];
    const bin = pkg.bin['autoclaim'];
    expect(bin).toBe('dist/cli/main.js');
    expect(entry).toEqual(['/usr/bin/tini', '--', 'node', ...serviceNodeFlags(), '--', `/app/${bin}`]);
    // The environment the unit sets for node.
    const env = inRuntime('ENV').map((i) => i.args).join(' ');
    for (const v of serviceEnv()) expect(env.split(/\s+/)).toContain(v);
    expect(inRuntime('RUN').map((i) => i.args).join('\n')).toMatch(/install .*\btini\b/);
    expect(JSON.parse(inRuntime('CMD').at(-1)?.args ?? 'null')).toEqual(['run']);
    expect(inRuntime('WORKDIR').at(-1)?.args).toBe('/app');
    expect(inRuntime('COPY').map((i) => i.args)).toContain('--from=build /app/dist ./dist');
  });

  it('runs as a non-root user', () => {
    const user = inRuntime('USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(['root', '0', '0:0']).not.toContain(user);
    const order = runtime?.body.map((i) => i.op) ?? [];
    expect(order.lastIndexOf('USER')).toBeGreaterThan(order.lastIndexOf('RUN'));
  });

  it('keeps state in a volume and finds its config where the compose file mounts it', () => {
    expect(inRuntime('VOLUME').map((i) => i.args).join(' ')).toContain('/var/lib/autoclaim');
    const env = inRuntime('ENV').map((i) => i.args).join(' ');
    expect(env).toContain('STATE_DIRECTORY=/var/lib/autoclaim');
    expect(env).toContain('AUTOCLAIM_CONFIG=/etc/autoclaim/autoclaim.yaml');
    expect(env).toContain('NODE_ENV=production');
  });

  it('has a HEALTHCHECK that asks /healthz with node itself', () => {
    const hc = inRuntime('HEALTHCHECK').at(-1)?.args ?? '';
    expect(hc).toMatch(/CMD \["node", "-e", ".*fetch\(process\.env\.AUTOCLAIM_HEALTH_URL/);
    expect(inRuntime('ENV').map((i) => i.args).join(' ')).toContain('AUTOCLAIM_HEALTH_URL=http://127.0.0.1:9464/healthz');
  });

  it('has a HEALTHCHECK command that passes on a healthy /healthz and fails otherwise', async () => {
    const hc = inRuntime('HEALTHCHECK').at(-1)?.args ?? '';
    const argv = JSON.parse(hc.slice(hc.indexOf('CMD ') + 4)) as string[];
    expect(argv[0]).toBe('node');
    let lag = 0;
    const server = await startHealthServer({
      listen: '127.0.0.1:0',
      metrics: createMetrics({ processMetrics: false }),
      redact: (t) => t,
      health: () => ({
        now: 0,
        lastSuccessAt: 0,
        startedAt: 0,
        pollIntervalMs: 1,
        staleAfterIntervals: 3,
        dbError: undefined,
        signing: { all: undefined, wallets: new Map() },
        signersDown: [],
        configValid: true,
      }),
      logger: silentLogger(),
      loopLagMs: () => lag,
    });
    const probe = (url: string) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, argv.slice(1), { env: { AUTOCLAIM_HEALTH_URL: url }, stdio: 'ignore' });
        child.on('exit', (code) => resolve(code));
      });
    try {
      expect(await probe(`${server.url}/healthz`)).toBe(0);
      lag = 60_000;
      expect(await probe(`${server.url}/healthz`)).toBe(1);
    } finally {
      await server.close();
    }
    expect(await probe(`${server.url}/healthz`)).toBe(1); // nobody listening
  });

  it('sends only the sources into the build context', () => {
    const ignore = read('.dockerignore').split('\n').map((l) => l.trim());
    expect(ignore).toContain('*');
    for (const needed of ['!package.json', '!package-lock.json', '!tsconfig.json', '!tsconfig.build.json', '!src/']) {
      expect(ignore).toContain(needed);
    }
    expect(ignore).toContain('**/*.env');
  });

  it('sends every file the build reads: no exclusion meant for keys drops a source folder (src/keys/)', () => {
    const rules = parseDockerignore(read('.dockerignore'));
    const sources = readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(ROOT, join(e.parentPath, e.name)).split(sep).join('/'));
    const needed = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'config/production.example.yaml', ...sources];
    expect(needed.filter((f) => !sentToBuild(f, rules))).toEqual([]);
    // And what must stay out still does.
    for (const f of ['config/docker-demo.env', 'config/keys/treasury.json', 'var/demo-keys/ops.json', 'var/autoclaim.db', '.env', 'node_modules/x/index.js']) {
      expect(sentToBuild(f, rules), f).toBe(false);
    }
  });

  it('gives the build stage what `npm run build` reads: tsc with tsconfig.build.json over src/', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts['build']).toBe('tsc -p tsconfig.build.json');
    const copied = build?.body.filter((i) => i.op === 'COPY').map((i) => i.args) ?? [];
    expect(copied).toContain('tsconfig.json tsconfig.build.json ./');
    expect(copied).toContain('src ./src');
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as {
    services: Record<string, Record<string, unknown>>;
    volumes: Record<string, unknown>;
  };
  const sandbox = compose.services['sandbox'] ?? {};
  const autoclaim = compose.services['autoclaim'] ?? {};

  it('has the sandbox and autoclaim, both from the one image', () => {
    // Besides the `cluster` profile's services (compose-cluster.test.ts).
    const plain = Object.entries(compose.services).filter(([, s]) => s['profiles'] === undefined);
    expect(plain.map(([name]) => name).sort()).toEqual(['autoclaim', 'sandbox']);
    expect(sandbox['image']).toBe(autoclaim['image']);
    // Day-long epochs: the daemon is not on the sandbox's loopback, so its fast epochs would be refused (SPEC §2).
    expect(sandbox['command']).toEqual(['sandbox', '--host', '0.0.0.0', '--port', '8787', '--epoch-seconds', '86400']);
    expect(autoclaim['command']).toEqual(['run']);
    expect(autoclaim['depends_on']).toEqual({ sandbox: { condition: 'service_healthy' } });
  });

  it('runs both read-only with a tmpfs /tmp', () => {
    for (const s of [sandbox, autoclaim]) {
      expect(s['read_only']).toBe(true);
      expect(s['tmpfs']).toEqual(['/tmp']);
      expect(s['cap_drop']).toEqual(['ALL']);
      expect(s['ulimits']).toEqual({ core: 0 });
    }
  });

  it('mounts the config read-only and the state on a named volume', () => {
    const volumes = autoclaim['volumes'] as string[];
    const config = volumes.find((v) => v.includes(':/etc/autoclaim/autoclaim.yaml'));
    expect(config).toBe('./config/docker.example.yaml:/etc/autoclaim/autoclaim.yaml:ro');
    expect(existsSync(join(ROOT, 'config', 'docker.example.yaml'))).toBe(true);
    expect(volumes).toContain('autoclaim-state:/var/lib/autoclaim');
    expect(Object.keys(compose.volumes)).toContain('autoclaim-state');
  });

  it('points the sandbox health check at the sandbox', () => {
    expect((sandbox['environment'] as Record<string, string>)['AUTOCLAIM_HEALTH_URL']).toBe('http://127.0.0.1:8787/v1/health');
  });
});

describe('config/docker.example.yaml', () => {
  const envFile = Object.fromEntries(
    read('config/docker-demo.env')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  ) as Record<string, string>;

  it('is a valid config that talks to the sandbox service', () => {
    const result = loadConfig(join(ROOT, 'config', 'docker.example.yaml'), { env: { ...envFile, STATE_DIRECTORY: '/var/lib/autoclaim' }, cwd: ROOT });
    expect(result.errors).toEqual([]);
    expect(result.config?.api.baseUrl).toBe('http://sandbox:8787/v1');
    expect(result.config?.state.path).toBe('/var/lib/autoclaim/autoclaim.db');
    expect(result.config?.metrics.listen).toBe('127.0.0.1:9464');
  });

  it('gets every wallet key from the demo env file, each matching its address', () => {
    const result = loadConfig(join(ROOT, 'config', 'docker.example.yaml'), { env: envFile, cwd: ROOT });
    const wallets = result.config?.wallets ?? [];
    expect(wallets).toHaveLength(3);
    for (const w of wallets) {
      const signer = loadKey(w.key as { env: string }, { env: envFile });
      expect(() => checkAddress(signer, w.address, w.name)).not.toThrow();
    }
    expect(envFile['AUTOCLAIM_API_KEY']).toBe(
      ((parse(read('docker-compose.yml'), { merge: true }) as { services: { sandbox: { environment: Record<string, string> } } }).services.sandbox
        .environment)['AUTOCLAIM_API_KEY'],
    );
  });
});
