// `key SOURCE`: prints the wallet address of a key file, `env:NAME` or `credential:NAME`.
import { resolve } from 'node:path';
import { looksLikeKeyMaterial } from '../../config/secrets.js';
import type { InProcessKeySource } from '../../domain.js';
import { loadKey } from '../../keys/keys.js';
import type { CommandContext } from '../context.js';
import { EXIT, type ExitCode } from '../exit-codes.js';
import { writeLine } from '../io.js';

function parseKeySource(source: string, cwd: string): InProcessKeySource {
  if (source.startsWith('env:')) return { env: source.slice(4) };
  if (source.startsWith('credential:')) return { credential: source.slice(11) };
  return { file: resolve(cwd, source) };
}

export function keyCommand(ctx: CommandContext, source: string): ExitCode {
  const { io } = ctx;
  let signer: ReturnType<typeof loadKey>;
  try {
    signer = loadKey(parseKeySource(source, io.cwd), {
      env: io.env,
      credentialsDir: io.env.CREDENTIALS_DIRECTORY,
      baseDir: io.cwd,
      redactor: ctx.redactor,
    });
  } catch (err) {
    // The key itself pasted where its source goes (`autoclaim key <base58>`) is quoted by the
    // failure ("key file /cwd/<key> does not exist"), and a key never loaded is unknown to the
    // redactor: registered now, before the message leaves.
    const named = source.replace(/^(env|credential):/, '');
    if (looksLikeKeyMaterial(named)) ctx.redactor.add(named);
    throw err;
  }
  writeLine(io.stdout, signer.address);
  return EXIT.OK;
}
