// A signal's default action ends a Node process: `run` must have its handlers in place before the
// daemon's first turn, so that systemd's reload (SIGHUP) or stop (SIGTERM) sent while the daemon
// starts neither kills it nor is lost (found by the rolling-lists cluster test: a SIGHUP between
// `daemon.started` and the handlers ended the process).
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { systemClock } from '../../src/domain.js';
import { CANARY_API_KEY, makeWallets, parseEvents, tempDir, writeConfig } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

it('has its SIGHUP and SIGTERM handlers when the daemon says it started; a reload asked for then is applied', async () => {
  const wallets = makeWallets(dir, ['alpha']);
  const config = writeConfig(dir, { baseUrl: 'sandbox', wallets });
  const signals = new EventEmitter();
  let text = '';
  const atStart: Record<string, number> = {};
  const stdout = new Writable({
    write(chunk: Buffer, _enc, cb) {
      const line = chunk.toString();
      text += line;
      if (line.includes('"event":"daemon.started"')) {
        atStart.hup = signals.listenerCount('SIGHUP');
        atStart.term = signals.listenerCount('SIGTERM');
        signals.emit('SIGHUP'); // as systemd's reload would, at this very moment
      }
      if (line.includes('"event":"config.reloaded"')) signals.emit('SIGTERM');
      cb();
    },
  });
  const stderr = new Writable({ write: (_c, _e, cb) => cb() });
  const code = await main(['run', '--config', config], { env: { AUTOCLAIM_API_KEY: CANARY_API_KEY }, cwd: dir, stdout, stderr, clock: systemClock, signals });
  expect(atStart).toEqual({ hup: 1, term: 1 });
  const events = parseEvents(text).map((e) => e['event']);
  expect(events).toContain('config.reloaded');
  expect(events).toContain('daemon.stop_requested');
  expect(code).toBe(0);
}, 60_000);

/**
 * `run` against the built-in sandbox, `onLine(event, signals)` called as each log line is written
 * (the sandbox's start is logged while the runtime still opens: config, keys, state).
 */
async function runWith(onLine: (event: string, signals: EventEmitter) => void): Promise<{ code: number; events: unknown[] }> {
  const wallets = makeWallets(dir, ['alpha']);
  const config = writeConfig(dir, { baseUrl: 'sandbox', wallets });
  const signals = new EventEmitter();
  let text = '';
  const stdout = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString();
      for (const e of parseEvents(chunk.toString())) onLine(String(e['event']), signals);
      cb();
    },
  });
  const stderr = new Writable({ write: (_c, _e, cb) => cb() });
  const code = await main(['run', '--config', config], { env: { AUTOCLAIM_API_KEY: CANARY_API_KEY }, cwd: dir, stdout, stderr, clock: systemClock, signals });
  return { code, events: parseEvents(text).map((e) => e['event']) };
}

it('has its handlers while the runtime opens: a SIGHUP then is applied once started', async () => {
  const atSandbox: Record<string, number> = {};
  const r = await runWith((event, signals) => {
    if (event === 'sandbox.started') {
      atSandbox.hup = signals.listenerCount('SIGHUP');
      atSandbox.term = signals.listenerCount('SIGTERM');
      signals.emit('SIGHUP');
    }
    if (event === 'config.reloaded') signals.emit('SIGTERM');
    // Without the handlers the SIGHUP was lost: stopped here, so the test ends and says so.
    if (event === 'daemon.started' && atSandbox.hup === 0) signals.emit('SIGTERM');
  });
  expect(atSandbox).toEqual({ hup: 1, term: 1 });
  expect(r.events).toContain('config.reloaded');
  expect(r.code).toBe(0);
}, 60_000);

it('stops before the first turn at a SIGTERM while the runtime opens', async () => {
  let heard = 0;
  const r = await runWith((event, signals) => {
    if (event === 'sandbox.started') {
      heard = signals.listenerCount('SIGTERM');
      signals.emit('SIGTERM');
    }
    if (event === 'daemon.started' && heard === 0) signals.emit('SIGTERM');
  });
  expect(heard).toBe(1);
  expect(r.events).toContain('daemon.stop_requested');
  expect(r.events).not.toContain('daemon.started');
  expect(r.events).not.toContain('poll.ok');
  expect(r.code).toBe(0);
}, 60_000);
