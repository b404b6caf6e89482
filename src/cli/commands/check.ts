// `check`: exactly the start-up pipeline (config, rules, keys), without the lock or the API. Every
// problem, whatever step finds it, is listed in one pass with its file:line:col. As at start, each
// remote signer (PKCS#11, Vault, KMS, the signer service) is asked for its public key, which must
// derive the wallet's address; the lines say which backend signs each wallet (doctor's words).
import { summarizeConfig } from '../../config/index.js';
import { formatIssue } from '../../errors.js';
import { backendOf, closeSigners } from '../../keys/backends/index.js';
import type { WalletSigner } from '../../keys/port.js';
import { checkConfig, connectWalletSigners } from '../../runtime.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';
import { walletKeyOk } from './doctor/checks.js';

export async function checkCommand(ctx: CommandContext): Promise<ExitCode> {
  const { io } = ctx;
  // The demo config's keys are generated on first use, by check as by run.
  const result = checkConfig(ctx.configPath, { env: io.env, cwd: io.cwd, redactor: ctx.redactor, logger: ctx.logger });
  for (const w of result.warnings) writeLine(io.stderr, `warning: ${formatIssue(w)}`);
  if (result.config === undefined) {
    for (const e of result.errors) writeLine(io.stderr, formatIssue(e));
    writeLine(io.stderr, `${ctx.configPath}: ${result.errors.length} error(s); the config is invalid`);
    return EXIT.CONFIG;
  }
  const config = result.config;
  const signers = result.secrets?.signers ?? new Map<string, WalletSigner>();
  let problems;
  try {
    problems = await connectWalletSigners(config, signers);
  } finally {
    await closeSigners(signers.values());
  }
  writeLine(io.stdout, summarizeConfig(config, new Date(io.clock.now()), { env: io.env }));
  const failed = new Set(problems.map((p) => p.path));
  writeLine(io.stdout, '\nsigners');
  config.wallets.forEach((w, i) => {
    const backend = signers.get(w.address)?.backend ?? backendOf(w.key);
    writeLine(io.stdout, `  ${failed.has(`wallets[${i}].key`) ? `wallet ${w.name}: signed by ${backend}, which did not answer or does not derive ${w.address}` : walletKeyOk(w.name, w.address, backend).text}`);
  });
  if (problems.length > 0) {
    for (const e of problems) writeLine(io.stderr, formatIssue(e));
    writeLine(io.stderr, `${ctx.configPath}: ${problems.length} error(s); a wallet's signer is not usable`);
    return EXIT.CONFIG;
  }
  writeLine(io.stdout, `\n${ctx.configPath}: valid (${config.wallets.length} wallet(s), ${config.rules.length} rule(s), all keys load and match)`);
  return EXIT.OK;
}
