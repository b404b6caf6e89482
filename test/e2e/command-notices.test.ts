// `once` and `send` tell what they did like the daemon does (issue 27): their step outcomes go to
// the webhook and to alerts.channels and are delivered before the command returns; a receiver that
// is down costs at most the bounded wait, and the notice stays in the state database's outbox for
// the next run. In-process against the sandbox on loopback, a real state file, loopback receivers.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { startReceiver, stopReceivers } from '../service/webhook-receiver.js';
import { makeWallets, runCli, tempDir, writeConfig, type TestWallet } from './helpers.js';

const SOL = 1_000_000_000n;

interface Hook {
  events: Array<{ event: string; key: string; text: string; details: Record<string, unknown> }>;
}
interface Slack {
  text: string;
  blocks: Array<{ type: string; text?: { text: string } }>;
}

describe('notices of once and send', () => {
  let dir: string;
  let cleanup: () => void;
  let sandbox: Sandbox;
  let wallet: TestWallet;

  beforeAll(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-notices-'));
    [wallet] = makeWallets(dir, ['treasury']) as [TestWallet];
    sandbox = await startSandbox({
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallet.address, pendingLamports: 2n * SOL, accrualLamportsPerSec: 0n, balanceLamports: 10n * SOL }],
      apiKey: 'sandbox-api-key-for-notices-0123',
    });
  });
  afterEach(() => stopReceivers());
  afterAll(async () => {
    await sandbox.close();
    cleanup();
  });

  // No rule fires: what moves is what `send` asks for.
  const config = (extra: string, maxSolPerAction = '5') =>
    writeConfig(dir, {
      baseUrl: sandbox.url,
      wallets: [wallet],
      rules: '  - name: never\n    when: { pending_sol: { gte: 1000000 } }\n    do: [claim]\n',
      maxSolPerAction,
      extra,
    });
  const env = { AUTOCLAIM_API_KEY: 'sandbox-api-key-for-notices-0123' };

  it('send: the refusal is on the webhook and on Slack when the command returns', async () => {
    const hook = await startReceiver<Hook>({ path: '/hook', status: () => 200 });
    const slack = await startReceiver<Slack>({ path: '/services/T/B/SLACKTOKEN', status: () => 200 });
    const file = config('alerts:\n  channels:\n    - type: slack\n      url: { env: SLACK_URL }\n');
    const r = await runCli(['send', 'mint', '--wallet', 'treasury', '--symbol', 'SOL5X', '--amount', '6', '--id', 'too-much', '--yes', '--config', file], {
      cwd: dir,
      env: { ...env, AUTOCLAIM_WEBHOOK_URL: hook.url, SLACK_URL: slack.url },
    });
    expect(r.code).toBe(1);
    // No waiting here: delivered before runCli resolved.
    expect(hook.posts.flatMap((p) => p.body.events.map((e) => [e.event, e.details['severity'], e.details['wallet']]))).toEqual([['action.rejected', 'error', 'treasury']]);
    expect(slack.posts).toHaveLength(1);
    expect(slack.posts[0]?.body.blocks[0]?.text?.text).toBe('ERROR · action.rejected · treasury');
  });

  it('a receiver down costs the bounded wait at most; the notice waits in the outbox and the next once delivers it', async () => {
    let up = false;
    const hook = await startReceiver<Hook>({ path: '/hook', status: () => (up ? 200 : 503) });
    const file = config('');
    const first = await runCli(['send', 'mint', '--wallet', 'treasury', '--symbol', 'SOL5X', '--amount', '7', '--id', 'too-much-2', '--yes', '--config', file], {
      cwd: dir,
      env: { ...env, AUTOCLAIM_WEBHOOK_URL: hook.url },
    });
    expect(first.code).toBe(1);
    expect(first.events.filter((e) => e['event'] === 'notify.webhook_failed')).not.toHaveLength(0);
    const refused = hook.posts.flatMap((p) => p.body.events.map((e) => e.key));
    expect(refused).toHaveLength(1);
    up = true;
    // Later, when the notice's retry is due (the notifier's backoff is 5 to 10 s after a 503).
    const later = { now: () => Date.now() + 60_000, monotonic: () => systemClock.monotonic() + 60_000 };
    const second = await runCli(['once', '--config', file], { cwd: dir, env: { ...env, AUTOCLAIM_WEBHOOK_URL: hook.url }, clock: later });
    expect(second.code).toBe(0);
    // The refusal kept in the outbox by `send`, delivered by the next command that has a notifier.
    expect(hook.posts.slice(1).flatMap((p) => p.body.events.map((e) => e.key))).toEqual(refused);
  });
});
