// `doctor`: a first contact with the API that moves nothing. GETs only, no state file, no lock;
// the signed requests are built and printed, never sent. With state.url it reads (never writes)
// whether the PostgreSQL state commits durably (commands/doctor/state.ts). Exit 0 all well, 1 a problem.
import { lookup } from 'node:dns/promises';
import { dirname } from 'node:path';
import { checkAddress, loadKey } from '../../keys/keys.js';
import { backendOf, closeSigners, connectSigners, isInProcess, openSigner } from '../../keys/backends/index.js';
import { templatesOf } from '../../keys/message.js';
import type { Signer } from '../../keys/signer.js';
import { apiKeySource, describeApiKeySource, resolveApiKey } from '../../config/index.js';
import { resolveStatePassword } from '../../config/secrets.js';
import { KeyError } from '../../errors.js';
import type { ApiKeyState } from './doctor/checks.js';
import { formatJson, formatText } from './doctor/format.js';
import { isAllWell } from './doctor/report.js';
import { runDoctor } from './doctor/run.js';
import { loadValidConfig, openApi } from '../../runtime.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';

export async function doctorCommand(ctx: CommandContext, opts: { json?: boolean; probe?: boolean; acceptDefaults?: boolean }): Promise<ExitCode> {
  const { io } = ctx;
  const env = io.env;
  const config = loadValidConfig(ctx.configPath, env, io.cwd, ctx.logger);
  const sandbox = config.api.baseUrl === 'sandbox';

  // The key's value stays here (registered with the redactor); doctor's checks only learn whether
  // there is one. An unusable key is a problem to report, not a reason to skip the reads.
  let apiKey: ApiKeyState;
  let openWith = { config, env };
  try {
    const key = resolveApiKey(config, env, { credentialsDir: env.CREDENTIALS_DIRECTORY });
    ctx.redactor.add(key);
    apiKey =
      key !== undefined
        ? { kind: 'present', source: describeApiKeySource(apiKeySource(config, env)) }
        : sandbox
          ? { kind: 'sandbox' }
          : { kind: 'missing' };
  } catch (err) {
    if (!(err instanceof KeyError)) throw err;
    apiKey = { kind: 'unusable', message: err.message };
    openWith = {
      config: { ...config, api: { ...config.api, apiKeyFile: undefined } },
      env: { ...env, AUTOCLAIM_API_KEY: undefined, CREDENTIALS_DIRECTORY: undefined },
    };
  }

  const api = await openApi(openWith.config, { env: openWith.env, clock: io.clock, logger: ctx.logger, redactor: ctx.redactor });
  try {
    // After openApi: with base_url sandbox, it writes the demo wallets' keys first.
    const keys = new Map<string, { signer: Signer; backend?: string } | { remote: string } | { error: unknown }>();
    const keyOpts = { env, credentialsDir: env.CREDENTIALS_DIRECTORY, baseDir: dirname(config.file), redactor: ctx.redactor };
    for (const w of config.wallets) {
      try {
        if (isInProcess(w.key)) {
          const signer = loadKey(w.key, keyOpts);
          checkAddress(signer, w.address, w.name);
          keys.set(w.address, { signer, backend: backendOf(w.key) });
          continue;
        }
        // A backend outside the daemon: asked for its public key, which must derive the address.
        const remote = openSigner(w.key, w.address, w.name, { ...keyOpts, templates: templatesOf(config.api.endpoints) });
        try {
          const [problem] = await connectSigners([remote]);
          keys.set(w.address, problem === undefined ? { remote: remote.backend } : { error: new Error(`${remote.backend}: ${problem.message}`) });
        } finally {
          await closeSigners([remote]);
        }
      } catch (err) {
        if (!(err instanceof KeyError)) throw err;
        keys.set(w.address, { error: err });
      }
    }
    const report = await runDoctor({
      api: api.config.api,
      sandbox,
      wallets: config.wallets.map((w) => ({ name: w.name, address: w.address })),
      client: api.client,
      apiKey,
      keys,
      clockSkewThresholdMs: config.alerts.clockSkewMs,
      clock: io.clock,
      lookup: async (host) => (await lookup(host, { all: true })).map((a) => a.address),
      probe: opts.probe === true,
    });
    if (config.state.url !== undefined) {
      const { stateFindings } = await import('./doctor/state.js');
      let found;
      try {
        const password = resolveStatePassword(config, env, { credentialsDir: env.CREDENTIALS_DIRECTORY });
        ctx.redactor.add(password);
        found = await stateFindings(config.state.url, { password, queryTimeoutMs: config.state.queryTimeoutMs });
      } catch (err) {
        found = [{ area: 'state' as const, level: 'problem' as const, text: `the state database's password: ${err instanceof Error ? err.message : String(err)}` }];
      }
      report.findings.push(...found.map((f) => ({ ...f, text: ctx.redactor.redact(f.text) })));
    }
    // Everything that leaves the process passes the redactor (the API key and every key loaded above are registered).
    const accept = { acceptDefaults: opts.acceptDefaults === true };
    writeLine(io.stdout, ctx.redactor.redact(opts.json === true ? formatJson(report, accept) : formatText(report, accept)));
    return isAllWell(report, accept) ? EXIT.OK : EXIT.FAILURE;
  } finally {
    await api.close();
  }
}
