// `service install` and `status --service`: the systemd unit as an installed package runs it.
//
// `service install` writes the shipped unit (systemd/autoclaim.service) with ExecStart pointed at
// this package and this node, the configuration and credentials directories, and a config
// skeleton (config/production.example.yaml) that it never overwrites; run twice, it changes
// nothing. `--root DIR` writes under DIR instead of / (as `systemctl --root` does), for tests and
// images. The state directory is systemd's to create (StateDirectory=): with DynamicUser=yes it
// is /var/lib/private/autoclaim, owned by a uid that exists only while the service runs, and
// creating it by hand would give it the wrong owner.
//
// `status --service` reads the installed unit for the paths the service uses (its --config, its
// StateDirectory=, the folder of its credentials), so that `sudo autoclaim status --service`
// shows what the service sees without a `systemd-run -p DynamicUser=yes …` line.
import { accessSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine, type CliIo } from '../io.js';
import { UsageError } from '../usage-error.js';
import { VERSION } from '../version.js';

export const UNIT_NAME = 'autoclaim.service';
/** Where the shipped unit expects the program and node; `service install` replaces both. */
const TEMPLATE_NODE = '/usr/bin/node';
const TEMPLATE_ROOT = '/opt/autoclaim';

/** The package's own folder: dist/cli/commands/service.js (or src/… under the tests) is three below it. */
export function packageRoot(): string {
  return realpathSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..'));
}

export interface ServiceInstallOptions {
  user?: string;
  root?: string;
}

export interface RenderOptions {
  /** The node binary the unit starts. */
  node: string;
  /** The installed package's folder (holds dist/cli/main.js). */
  packageRoot: string;
  /** A fixed account instead of DynamicUser=yes. */
  user?: string | undefined;
}

// systemd splits ExecStart= on whitespace and expands % and $; a path with any of them would need
// quoting that the tests do not cover, so it is refused rather than half-supported.
const PLAIN_PATH = /^\/[A-Za-z0-9/._@+-]*$/;
// useradd's portable rule (NAME_REGEX of adduser), which is also what systemd accepts in User=.
const USER_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

/** The shipped unit, made to run this package: ExecStart's node and path, and the user. */
export function renderUnit(template: string, opts: RenderOptions): string {
  for (const [what, path] of [['node', opts.node], ['package folder', opts.packageRoot]] as const) {
    if (!PLAIN_PATH.test(path)) throw new UsageError(`the ${what} ${JSON.stringify(path)} has characters an ExecStart= line would need quoted; install autoclaim under a plain path`);
  }
  if (opts.user !== undefined && !USER_NAME.test(opts.user)) throw new UsageError(`--user ${JSON.stringify(opts.user)} is not a valid user name (lower case, digits, _ and -)`);
  let execFound = false;
  const lines = template.split('\n').map((line) => {
    if (line.startsWith('ExecStart=')) {
      execFound = true;
      return line.replace(`ExecStart=${TEMPLATE_NODE} `, `ExecStart=${opts.node} `).replace(` ${TEMPLATE_ROOT}/`, ` ${opts.packageRoot}/`);
    }
    if (opts.user !== undefined && line === 'DynamicUser=yes') {
      // A fixed account keeps the state's owner stable, so `sudo -u NAME autoclaim …` works too.
      return `DynamicUser=no\nUser=${opts.user}\nGroup=${opts.user}`;
    }
    return line;
  });
  if (!execFound) throw new Error('the unit template has no ExecStart= line');
  const header = [
    `# Written by \`autoclaim service install\` (autoclaim ${VERSION}) from ${join(opts.packageRoot, 'systemd', UNIT_NAME)}.`,
    '# Change it with a drop-in (`systemctl edit autoclaim`): the next `service install` rewrites this file.',
  ];
  return [...header, ...lines].join('\n');
}

export interface ServicePaths {
  unit: string;
  configFile: string;
  stateDirectory: string;
  credentialsDirectory: string;
}

/**
 * The paths a unit's service uses, under `root`: the `--config` of its ExecStart (with %E, the
 * system manager's /etc), its StateDirectory= (/var/lib/NAME, which is /var/lib/private/NAME under
 * DynamicUser=yes), and the folder its api_key credential is loaded from.
 */
export function servicePaths(unitText: string, root: string, unitFile: string): ServicePaths {
  const value = (key: string) =>
    unitText
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith(`${key}=`))
      .map((l) => l.slice(key.length + 1))
      .at(-1);
  const exec = value('ExecStart') ?? '';
  const config = /\s--config\s+(\S+)/.exec(exec)?.[1]?.replaceAll('%E', '/etc') ?? '/etc/autoclaim/autoclaim.yaml';
  const stateName = (value('StateDirectory') ?? 'autoclaim').split(/\s+/)[0] ?? 'autoclaim';
  const dynamic = /^(yes|true|1|on)$/i.test(value('DynamicUser') ?? 'no');
  const plain = join(root, 'var', 'lib', stateName);
  const hidden = join(root, 'var', 'lib', 'private', stateName);
  // The /var/lib/NAME symlink systemd leaves may be missing (never started, or a copied tree).
  const stateDirectory = dynamic && !existsSync(plain) ? hidden : plain;
  const apiKey = unitText.split('\n').find((l) => l.startsWith('LoadCredential=api_key:'));
  const credentials = apiKey === undefined ? '/etc/autoclaim/credentials' : dirname(apiKey.slice('LoadCredential=api_key:'.length));
  return { unit: unitFile, configFile: join(root, config), stateDirectory, credentialsDirectory: join(root, credentials) };
}

export function serviceInstallCommand(io: CliIo, opts: ServiceInstallOptions): ExitCode {
  const root = opts.root ?? '/';
  const pkg = packageRoot();
  const template = readFileSync(join(pkg, 'systemd', UNIT_NAME), 'utf8');
  const unit = renderUnit(template, { node: process.execPath, packageRoot: pkg, user: opts.user });
  const out = (s: string) => writeLine(io.stdout, s);
  try {
    const unitDir = join(root, 'etc', 'systemd', 'system');
    mkdirSync(unitDir, { recursive: true, mode: 0o755 });
    const unitFile = join(unitDir, UNIT_NAME);
    const before = existsSync(unitFile) ? readFileSync(unitFile, 'utf8') : undefined;
    if (before === unit) out(`unchanged ${unitFile}`);
    else {
      writeFileSync(unitFile, unit, { mode: 0o644 });
      out(`${before === undefined ? 'wrote    ' : 'updated  '} ${unitFile} (runs ${process.execPath} ${join(pkg, 'dist', 'cli', 'main.js')})`);
    }
    const paths = servicePaths(unit, root, unitFile);
    const etc = dirname(paths.configFile);
    for (const [dir, mode] of [[etc, 0o755], [paths.credentialsDirectory, 0o700]] as const) {
      if (existsSync(dir)) {
        out(`kept      ${dir}/`);
        // Credentials are copied by systemd as root; a folder others can list gives their names away.
        if (mode === 0o700 && (statSync(dir).mode & 0o077) !== 0) out(`warning:  ${dir} is readable by others: chmod 700 it`);
      } else {
        mkdirSync(dir, { recursive: true, mode });
        out(`created   ${dir}/ (mode ${mode.toString(8)})`);
      }
    }
    if (existsSync(paths.configFile)) out(`kept      ${paths.configFile} (an existing config is never overwritten)`);
    else {
      writeFileSync(paths.configFile, readFileSync(join(pkg, 'config', 'production.example.yaml'), 'utf8'), { mode: 0o644, flag: 'wx' });
      out(`wrote     ${paths.configFile} (a skeleton: replace its URL, addresses and keys)`);
    }
    // The skeleton's first line points editors at the schema beside it; this version's schema.
    const schemaFile = join(etc, 'autoclaim.schema.json');
    const schema = readFileSync(join(pkg, 'config', 'autoclaim.schema.json'), 'utf8');
    if (existsSync(schemaFile) && readFileSync(schemaFile, 'utf8') === schema) out(`unchanged ${schemaFile}`);
    else {
      writeFileSync(schemaFile, schema, { mode: 0o644 });
      out(`wrote     ${schemaFile}`);
    }
    for (const w of hiddenPathWarnings([process.execPath, pkg])) out(`warning:  ${w}`);
    out('');
    out(`The state directory (${paths.stateDirectory.replace(/\/private\//, '/')}) is created by systemd at the first start.`);
    out('Next:');
    if (opts.user !== undefined) out(`  getent passwd ${opts.user} || sudo useradd --system --home-dir /var/lib/autoclaim --shell /usr/sbin/nologin ${opts.user}`);
    out(`  sudoedit ${paths.configFile}            # the API URL, wallets, keys; secrets go in ${paths.credentialsDirectory}/`);
    out(`  sudo CREDENTIALS_DIRECTORY=${paths.credentialsDirectory} autoclaim check --config ${paths.configFile}`);
    out('  sudo systemctl daemon-reload && sudo systemctl enable --now autoclaim');
    out('  sudo autoclaim status --service');
    return EXIT.OK;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EACCES' || e.code === 'EPERM' || e.code === 'EROFS') {
      writeLine(io.stderr, `autoclaim: cannot write ${e.path ?? root}: ${e.code} (run it as root: sudo autoclaim service install)`);
      return EXIT.FAILURE;
    }
    throw err;
  }
}

/** ProtectHome= and PrivateTmp= hide these from the service: a node or package there cannot start. */
function hiddenPathWarnings(paths: string[]): string[] {
  return paths
    .filter((p) => /^\/(home|root|run\/user|tmp|var\/tmp)(\/|$)/.test(p))
    .map((p) => `${p} is hidden from the service by ProtectHome=/PrivateTmp=: install node and autoclaim under /usr or /opt (npm install -g as root)`);
}

/**
 * The context `status --service` runs in: the installed unit's config, state directory and
 * credentials, unless --config or the environment already say otherwise.
 */
export function serviceContext(ctx: CommandContext, opts: { root?: string | undefined; configGiven: boolean }): CommandContext {
  const root = opts.root ?? '/';
  const installed = join(root, 'etc', 'systemd', 'system', UNIT_NAME);
  const unitFile = existsSync(installed) ? installed : join(packageRoot(), 'systemd', UNIT_NAME);
  const paths = servicePaths(readFileSync(unitFile, 'utf8'), root, unitFile);
  try {
    accessSync(dirname(paths.stateDirectory), constants.X_OK);
  } catch (err) {
    // /var/lib/private is root's alone (0700): a clearer word than the open's EACCES.
    if ((err as NodeJS.ErrnoException).code === 'EACCES') throw new UsageError(`cannot enter ${dirname(paths.stateDirectory)} (the service's state is root's to read): run it with sudo`);
  }
  const env = {
    ...ctx.io.env,
    STATE_DIRECTORY: paths.stateDirectory,
    CREDENTIALS_DIRECTORY: ctx.io.env.CREDENTIALS_DIRECTORY ?? paths.credentialsDirectory,
  };
  return { ...ctx, io: { ...ctx.io, env }, configPath: opts.configGiven ? ctx.configPath : paths.configFile };
}
