#!/usr/bin/env node
// The process edge: real streams, real signals, the real clock. The only place that exits.
//
// The cli/ folder: program.ts parses arguments and loads each command's module only when it runs
// (commands/, one a command: run and once, check, status, actions, send, key, doctor, leaderboard
// and wallet, sandbox, schema); context.ts builds what every command starts from; errors.ts and
// exit-codes.ts turn failures into one line and an exit code.
import { writeSync } from 'node:fs';
import { inspect } from 'node:util';
import { systemClock } from '../domain.js';
import { Redactor } from '../log/redact.js';
import { EXIT } from './exit-codes.js';
import { main } from './program.js';

// The run's Redactor, here so that the last resort scrubs too: Node's own report of an uncaught
// exception (or of an unhandled rejection, which Node raises as one) prints the error, its cause
// chain and its properties raw, and a message may quote a key, a token or a URL a command has
// registered. The process still ends, as Node would end it.
const redactor = new Redactor();
process.on('uncaughtException', (err) => {
  writeSync(2, `autoclaim: uncaught exception: ${redactor.redact(inspect(err, { depth: 4 }))}\n`); // before the exit: no stream left to drain
  process.exit(EXIT.FAILURE);
});

// A reader that leaves before the end (`autoclaim schema | head`, `status | grep -q paused`) ends
// what a command prints, not the command: its exit code stays its own (SPEC §3), where an unheard
// EPIPE was the uncaught exception above and exit 1. Nothing more reaches that stream once it broke
// (a write to it after the EPIPE is refused as destroyed); any other error on it is still fatal.
// stderr likewise: under systemd it is the same journal stream as stdout, and `run` says on it why
// it stops when its log on stdout is lost (run.ts), which the reader's going may have broken too.
const readerGone = (err: NodeJS.ErrnoException): void => {
  if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
};
process.stdout.on('error', readerGone);
process.stderr.on('error', readerGone);

// At SIGUSR1 Node opens its inspector (an unauthenticated debugger on 127.0.0.1:9229: code run in
// this process, its keys with it, by any local user who reaches the port) unless the process
// listens for it, and SIGUSR2's default ends the process. Every command listens, from before any
// key is read; `run` adds what the two mean to it (poll now, the pause record). Who may send them:
// root or this user, `autoclaim poll` and `pause` among them, which signal the pid a daemon's
// control file names (a file the daemon writes: a compromised one can name the signer's).
const heard = (): void => {};
process.on('SIGUSR1', heard);
process.on('SIGUSR2', heard);

const code = await main(process.argv.slice(2), {
  redactor,
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
