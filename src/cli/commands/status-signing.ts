// What `status` says of signing: whether it is paused, since when and why. A running daemon says it
// itself (its `<state>.daemon.json`, with the server's words for a refusal); without one, what
// would hold at its start: the kill switch of the config and of `autoclaim pause`. A refusal's
// pause does not outlive its process.
import type { AppConfig } from '../../domain.js';
import { killSwitchPause } from '../../executor/kill-switch.js';
import { controlPaths, readDaemonInfo, readPause, type SigningHold } from '../../service/control.js';

export interface SigningStatus {
  /** Whether a daemon is running on this state here (its pid), from its own file. */
  daemon: { running: boolean; pid: number | null; updatedAt: string | null };
  paused: boolean;
  holds: SigningHold[];
  /** The last `autoclaim pause` / `resume`, as recorded. */
  pauseRecord: { paused: boolean; by: string; at: string; reason?: string | undefined } | null;
}

export function signingStatus(config: AppConfig, now: number): SigningStatus {
  const paths = controlPaths(config.state.path);
  const info = readDaemonInfo(paths);
  const record = readPause(paths);
  const pauseRecord = record === undefined ? null : { paused: record.paused, by: `${record.user}@${record.host}`, at: new Date(record.at).toISOString(), ...(record.reason === undefined ? {} : { reason: record.reason }) };
  if (info?.alive === true) {
    return { daemon: { running: true, pid: info.pid, updatedAt: info.updated_at }, paused: info.signing.length > 0, holds: info.signing, pauseRecord };
  }
  const holds: SigningHold[] = [];
  const iso = (ms: number) => new Date(ms).toISOString();
  const all = killSwitchPause(config.safety, record, undefined, now);
  if (all !== undefined) holds.push({ wallet: 'all', source: 'kill_switch', since: iso(all.since), reason: all.reason, fix: all.fix });
  else {
    for (const w of config.wallets) {
      const p = killSwitchPause(config.safety, record, w, now);
      if (p !== undefined) holds.push({ wallet: w.name, source: 'kill_switch', since: iso(p.since), reason: p.reason, fix: p.fix });
    }
  }
  return { daemon: { running: false, pid: null, updatedAt: null }, paused: holds.length > 0, holds, pauseRecord };
}

/** Lines for the terminal, after the table. */
export function signingLines(s: SigningStatus): string[] {
  if (!s.paused) return [s.daemon.running ? `signing: not paused (daemon pid ${s.daemon.pid})` : 'signing: not paused (no daemon running here)'];
  return s.holds.map((h) => {
    const who = h.wallet === 'all' ? 'every wallet' : `wallet ${h.wallet}`;
    const said = [h.http_status === undefined ? undefined : `HTTP ${h.http_status}`, h.code, h.server_message].filter((t) => t !== undefined).join(' ');
    const server = said === '' ? '' : ` — the server said: ${said}${h.request_id === undefined ? '' : ` (x-request-id ${h.request_id})`}`;
    const since = h.source === 'kill_switch' && !s.daemon.running ? '' : ` since ${h.since}`;
    return `signing PAUSED for ${who}${since}: ${h.reason}${server}${h.fix === undefined ? '' : `; to lift: ${h.fix}`}`;
  });
}
