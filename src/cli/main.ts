#!/usr/bin/env node
// The process edge: real streams, real signals, the real clock. The only place that exits.
//
// The cli/ folder: program.ts parses arguments and loads each command's module only when it runs
// (commands/, one a command: run and once, check, status, actions, send, key, doctor, leaderboard
// and wallet, sandbox, schema); context.ts builds what every command starts from; errors.ts and
// exit-codes.ts turn failures into one line and an exit code.
import { systemClock } from '../domain.js';
import { main } from './program.js';

const code = await main(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  clock: systemClock,
  signals: process,
});
process.exitCode = code;
// A handle someone forgot to close must not keep a finished command alive; give logs a moment to drain.
setTimeout(() => process.exit(code), 2000).unref();
