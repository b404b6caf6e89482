#!/usr/bin/env node
// The process edge: real streams, real signals, the real clock. The only place that exits.
import { systemClock } from '../domain.js';
import { main } from './program.js';
import { applyV8Flags } from './v8-flags.js';

applyV8Flags();

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
