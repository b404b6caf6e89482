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
