// The parent's handle on a forked sandbox (see sandbox-proc.mjs).
import { fork } from 'node:child_process';
import { join } from 'node:path';

export async function forkSandbox(options) {
  const child = fork(join(import.meta.dirname, 'sandbox-proc.mjs'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'advanced' });
  const pending = new Map();
  let seq = 0;
  await new Promise((resolve, reject) => {
    child.once('message', (m) => (m.ready ? resolve() : reject(new Error('sandbox did not start'))));
    child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
  });
  child.on('message', (m) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error) p.reject(new Error(m.error));
    else p.resolve(m);
  });
  const call = (cmd, args = {}) =>
    new Promise((resolve, reject) => {
      const id = ++seq;
      pending.set(id, { resolve, reject });
      child.send({ id, cmd, ...args });
    });
  const { url, caFile } = await call('start', { options });
  return {
    url,
    /** With options.tls: the certificate of the HTTPS front, for the daemon's NODE_EXTRA_CA_CERTS. */
    caFile,
    pid: child.pid,
    stats: async () => (await call('stats')).stats,
    /** CPU ms the sandbox process has used so far. */
    cpuMs: async () => (await call('cpu')).cpuMs,
    resetStats: () => call('resetStats'),
    trace: (threshold) => call('trace', { threshold: String(threshold) }),
    traceGet: () => call('traceGet'),
    arrivals: (opts) => call('arrivals', opts),
    thresholds: (pairs) => call('thresholds', { thresholds: pairs.map(([a, l]) => [a, String(l)]) }),
    crossings: async () => (await call('crossings')).delaysMs,
    close: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      await call('close').catch(() => undefined);
      await exited;
    },
  };
}
