import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createNotifier } from '../../src/service/notify.js';
import { silentLogger } from '../../src/log/logger.js';
import { captureLog } from '../support/log.js';
import { listenNotify, type NotifyListener } from './notify-listener.js';

const SYSTEMD_NOTIFY = ['/usr/bin/systemd-notify', '/bin/systemd-notify'].find((p) => existsSync(p));

let listener: NotifyListener | undefined;
const tempDirs: string[] = [];

afterEach(() => {
  listener?.close();
  listener = undefined;
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('createNotifier outside systemd', () => {
  it('is disabled and silent when NOTIFY_SOCKET is unset', async () => {
    const log = captureLog();
    const n = createNotifier({ env: { WATCHDOG_USEC: '30000000' }, logger: log.logger });
    n.ready('up');
    n.watchdog();
    n.stopping();
    await n.close();
    expect(n.enabled).toBe(false);
    expect(n.watchdogIntervalMs()).toBeUndefined();
    expect(log.lines).toEqual([]);
  });

  it('treats a vsock or relative NOTIFY_SOCKET as unsupported', () => {
    expect(createNotifier({ env: { NOTIFY_SOCKET: 'vsock:2:1234' }, logger: silentLogger() }).enabled).toBe(false);
    expect(createNotifier({ env: { NOTIFY_SOCKET: 'relative.sock' }, logger: silentLogger() }).enabled).toBe(false);
  });
});

describe('createNotifier through the unix-dgram addon', () => {
  it('delivers READY=1, STATUS, WATCHDOG=1 and STOPPING=1 in order', async () => {
    listener = listenNotify();
    const n = createNotifier({ env: { NOTIFY_SOCKET: listener.path }, logger: silentLogger(), transport: 'addon' });
    expect(n.enabled).toBe(true);
    n.ready('polling 2 wallets');
    n.watchdog();
    n.status('line one\nline two');
    n.stopping();
    await n.close();
    await listener.waitFor('STOPPING=1');
    expect(listener.messages).toEqual([
      'READY=1\nSTATUS=polling 2 wallets',
      'WATCHDOG=1',
      'STATUS=line one line two',
      'STOPPING=1',
    ]);
  });

  it('sends RELOADING=1 with a monotonic timestamp', async () => {
    listener = listenNotify();
    const n = createNotifier({ env: { NOTIFY_SOCKET: listener.path }, logger: silentLogger() });
    n.reloading();
    n.ready();
    await n.close();
    await listener.waitFor('READY=1');
    expect(listener.messages[0]).toMatch(/^RELOADING=1\nMONOTONIC_USEC=[1-9][0-9]*$/);
  });

  it('pings from a timer while healthy and withholds pings while not', async () => {
    listener = listenNotify();
    // WATCHDOG_USEC of 20 ms: a ping every 10 ms.
    const env = { NOTIFY_SOCKET: listener.path, WATCHDOG_USEC: '20000', WATCHDOG_PID: String(process.pid) };
    const n = createNotifier({ env, logger: silentLogger() });
    expect(n.watchdogIntervalMs()).toBe(10);

    const stop = n.startWatchdog();
    await listener.waitFor('WATCHDOG=1');
    stop();
    await n.close();
    const pings = listener.assignments().filter((a) => a === 'WATCHDOG=1').length;

    let asked = 0;
    const stopUnhealthy = n.startWatchdog(() => {
      asked += 1;
      return false;
    });
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (asked >= 3) {
          clearInterval(t);
          resolve();
        }
      }, 5);
    });
    stopUnhealthy();
    await n.close();
    expect(listener.assignments().filter((a) => a === 'WATCHDOG=1').length).toBe(pings);
  });

  it('logs a failed send once at warn, never throws, and keeps trying', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'autoclaim-notify-'));
    tempDirs.push(dir);
    const log = captureLog();
    const n = createNotifier({ env: { NOTIFY_SOCKET: join(dir, 'nobody-here.sock') }, logger: log.logger });
    n.ready();
    n.watchdog();
    await n.close();
    const failures = log.events('notify.failed');
    expect(failures.map((f) => f['level'])).toEqual(['warn', 'debug']);
  });
});

describe('watchdogIntervalMs', () => {
  const base = { NOTIFY_SOCKET: '/run/systemd/notify' };
  const interval = (env: Record<string, string>, pid = 4242) =>
    createNotifier({ env: { ...base, ...env }, logger: silentLogger(), pid }).watchdogIntervalMs();

  it('is half of WATCHDOG_USEC in milliseconds', () => {
    expect(interval({ WATCHDOG_USEC: '30000000' })).toBe(15_000);
    expect(interval({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '4242' })).toBe(15_000);
  });

  it('is undefined when the watchdog is meant for another process or not set', () => {
    expect(interval({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '1' })).toBeUndefined();
    expect(interval({})).toBeUndefined();
    expect(interval({ WATCHDOG_USEC: '0' })).toBeUndefined();
    expect(interval({ WATCHDOG_USEC: 'soon' })).toBeUndefined();
  });

  it('is undefined without a notify socket', () => {
    expect(createNotifier({ env: { WATCHDOG_USEC: '30000000' }, logger: silentLogger() }).watchdogIntervalMs()).toBeUndefined();
  });
});

describe('abstract socket names', () => {
  it('are never sent through the addon, which cannot address them', async () => {
    const log = captureLog();
    const n = createNotifier({ env: { NOTIFY_SOCKET: '@autoclaim-test-abstract' }, logger: log.logger, transport: 'addon' });
    expect(n.enabled).toBe(true);
    n.ready();
    await n.close();
    expect(log.events('notify.failed')).toEqual([]);
  });
});

describe.skipIf(SYSTEMD_NOTIFY === undefined)('createNotifier through systemd-notify', () => {
  it('delivers READY=1 and STATUS from a child process', async () => {
    listener = listenNotify();
    const n = createNotifier({
      env: { NOTIFY_SOCKET: listener.path, PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      logger: silentLogger(),
      transport: 'systemd-notify',
    });
    n.ready('from a child');
    await n.close();
    await listener.waitFor('READY=1');
    expect(listener.assignments()).toContain('STATUS=from a child');
  });
});
