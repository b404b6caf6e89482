// A wallet's alert outlives the wallet: the supervisor keeps, per wallet name, whose epoch was
// refused (epoch_refused) and whose pending grows unclaimed (claims_stalled), and only a poll of
// that wallet (or an applied claim) ever cleared them. A SIGHUP that takes the wallet out of the
// config (or renames it) means no poll ever comes again: its alert stayed open for the process's
// life (autoclaim_alerts_open{alert="epoch_refused"} 1 for months, AutoclaimAlertOpen firing, no
// `alert.closed`), for a wallet this daemon no longer works. evaluateAlerts says a key that no
// longer appears closes its episode ("a wallet taken out of the config"); signer_unavailable
// already forgot such wallets (now forgetWalletsNotHere, for all three), these two did not. In-process `run` against
// the built-in sandbox, its fault queue standing in for a server whose epoch for one wallet is
// not believable.
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { systemClock } from '../../src/domain.js';
import { sandboxYaml } from '../daemon/in-process.js';
import { makeWallets, parseEvents, tempDir, type TestWallet } from './helpers.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

let cleanup: (() => void) | undefined;
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
});

async function until(cond: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('a wallet with epoch_refused open, taken out of the config by a SIGHUP: its alert closes (it stayed open for good)', async () => {
  const t = tempDir('autoclaim-alerts-reload-');
  cleanup = t.cleanup;
  const [alpha, beta] = makeWallets(t.dir, ['alpha', 'beta']) as [TestWallet, TestWallet];
  const configPath = join(t.dir, 'autoclaim.yaml');
  // Polled every second; alerts.unclaimed_after on, so the claims_stalled watch is kept too.
  const yaml = (wallets: TestWallet[]) => `${sandboxYaml(wallets).replace('poll: "0 0 1 1 *"', 'poll: "*/1 * * * * *"')}alerts:\n  unclaimed_after: 1h\n`;
  writeFileSync(configPath, yaml([alpha, beta]));

  const signals = new EventEmitter();
  const stdout = new Capture();
  const exit = main(['run', '--config', configPath], { env: {}, cwd: t.dir, stdout, stderr: new Capture(), clock: systemClock, signals });
  const logged = () => parseEvents(stdout.text);
  const alerts = (change: 'opened' | 'closed') => logged().filter((e) => e['event'] === `alert.${change}` && e['alert'] === 'epoch_refused');
  try {
    await until(() => logged().some((e) => e['event'] === 'daemon.started'), 'the daemon');
    const sandbox = /"url":"(http:\/\/127\.0\.0\.1:\d+)\/v1"/.exec(stdout.text)?.[1];
    // Beta's summary says an epoch 70 years ahead, for as long as it is asked.
    const body = JSON.stringify({ address: beta.address, epoch: '2099-01-01', pending_sol: 0, lifetime_sol: 0, rank: 1, tier: 'Gold' });
    const queued = await fetch(`${sandbox}/__sandbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'malformed', body, match: { op: 'summary', wallet: beta.address }, times: 1_000_000 }),
    });
    expect(queued.status).toBe(201);
    await until(() => alerts('opened').length === 1, 'epoch_refused opened for beta');
    expect(alerts('opened')[0]).toMatchObject({ wallet: 'beta' });

    // Beta is taken out of the config.
    writeFileSync(configPath, yaml([alpha]));
    signals.emit('SIGHUP');
    await until(() => logged().some((e) => e['event'] === 'config.reloaded'), 'the reload');
    const reloadedAt = logged().findIndex((e) => e['event'] === 'config.reloaded');
    // Alpha's polls after the reload: by the third, at least two cycles finished and had their
    // alerts evaluated. Bounded by polls, not by time.
    const alphaPollsSince = () => logged().filter((e, i) => i > reloadedAt && e['event'] === 'poll.ok' && e['wallet'] === 'alpha').length;
    await until(() => alerts('closed').length > 0 || alphaPollsSince() >= 3, 'three polls of alpha after the reload');
    expect(alerts('closed')).toMatchObject([{ wallet: 'beta' }]);
  } finally {
    signals.emit('SIGTERM');
    expect(await exit).toBe(0);
  }
}, 30_000);

it('a wallet with claims_stalled open, taken out of the config by a SIGHUP: its alert closes (it stayed open for good)', async () => {
  const t = tempDir('autoclaim-alerts-reload-');
  cleanup = t.cleanup;
  const [alpha, beta] = makeWallets(t.dir, ['alpha', 'beta']) as [TestWallet, TestWallet];
  const configPath = join(t.dir, 'autoclaim.yaml');
  // A threshold nothing reaches: pending grows and nothing is claimed, past unclaimed_after.
  const yaml = (wallets: TestWallet[]) => `${sandboxYaml(wallets, { threshold: '1000000' }).replace('poll: "0 0 1 1 *"', 'poll: "*/1 * * * * *"')}alerts:\n  unclaimed_after: 1s\n`;
  writeFileSync(configPath, yaml([alpha, beta]));

  const signals = new EventEmitter();
  const stdout = new Capture();
  const exit = main(['run', '--config', configPath], { env: {}, cwd: t.dir, stdout, stderr: new Capture(), clock: systemClock, signals });
  const logged = () => parseEvents(stdout.text);
  const alerts = (change: 'opened' | 'closed', wallet: string) => logged().filter((e) => e['event'] === `alert.${change}` && e['alert'] === 'claims_stalled' && e['wallet'] === wallet);
  try {
    await until(() => alerts('opened', 'beta').length === 1 && alerts('opened', 'alpha').length === 1, 'claims_stalled opened for both');

    writeFileSync(configPath, yaml([alpha]));
    signals.emit('SIGHUP');
    await until(() => logged().some((e) => e['event'] === 'config.reloaded'), 'the reload');
    const reloadedAt = logged().findIndex((e) => e['event'] === 'config.reloaded');
    const alphaPollsSince = () => logged().filter((e, i) => i > reloadedAt && e['event'] === 'poll.ok' && e['wallet'] === 'alpha').length;
    await until(() => alerts('closed', 'beta').length > 0 || alphaPollsSince() >= 3, 'three polls of alpha after the reload');
    expect(alerts('closed', 'beta')).toHaveLength(1);
    // Alpha is still worked here, still unclaimed: its alert stays.
    expect(alerts('closed', 'alpha')).toEqual([]);
  } finally {
    signals.emit('SIGTERM');
    expect(await exit).toBe(0);
  }
}, 30_000);
