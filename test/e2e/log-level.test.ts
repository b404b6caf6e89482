// log.level in the config sets the level of `once`, `run` and `send` when neither --log-level nor
// $AUTOCLAIM_LOG_LEVEL says one (they win over it, in that order). It was accepted and documented,
// and nothing read it: the logger was made before the config was.
import { afterEach, describe, expect, it } from 'vitest';
import { makeWallets, runCli, tempDir, writeConfig } from './helpers.js';

describe('the log level', () => {
  let cleanup: (() => void) | undefined;
  afterEach(() => cleanup?.());

  /** `once --dry-run` against the built-in sandbox with `log: { level }` in the config; the levels of the lines it printed. */
  async function levels(configLevel: string, opts: { flag?: string; env?: string } = {}): Promise<Set<unknown>> {
    const t = tempDir('autoclaim-log-level-');
    cleanup = t.cleanup;
    const wallets = makeWallets(t.dir, ['alpha']);
    const config = writeConfig(t.dir, { baseUrl: 'sandbox', wallets, extra: `log:\n  level: ${configLevel}\n` });
    const argv = ['once', '--dry-run', '--config', config, ...(opts.flag === undefined ? [] : ['--log-level', opts.flag])];
    const r = await runCli(argv, { cwd: t.dir, env: opts.env === undefined ? {} : { AUTOCLAIM_LOG_LEVEL: opts.env } });
    expect(r.code, r.stderr).toBe(0);
    return new Set(r.events.map((e) => e['level']));
  }

  it('is the config\'s log.level when nothing else says one', async () => {
    expect(await levels('debug')).toContain('debug');
    const atWarn = await levels('warn');
    expect(atWarn).not.toContain('info');
    expect(atWarn).not.toContain('debug');
  });

  it('is --log-level, then $AUTOCLAIM_LOG_LEVEL, over the config\'s', async () => {
    expect(await levels('debug', { flag: 'info' })).not.toContain('debug');
    expect(await levels('debug', { env: 'info' })).not.toContain('debug');
    expect(await levels('warn', { env: 'info' })).toContain('info');
    expect(await levels('warn', { env: 'debug', flag: 'info' })).not.toContain('debug');
  });
});
