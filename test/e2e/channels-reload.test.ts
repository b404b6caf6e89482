// alerts.channels follow a SIGHUP reload of a running `run` (issue 27): a refused reload keeps the
// running channels (its config.invalid goes to them, and nothing reaches the channel only the
// refused file named); an accepted one stops the channel it removed and starts the one it added,
// without a restart. In-process `run` against the built-in sandbox, loopback receivers standing in
// for Slack and Discord.
import { EventEmitter } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/program.js';
import { systemClock } from '../../src/domain.js';
import { sandboxYaml } from '../daemon/in-process.js';
import { startReceiver, stopReceivers } from '../service/webhook-receiver.js';
import { makeWallets, parseEvents, tempDir, type TestWallet } from './helpers.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

let cleanup: (() => void) | undefined;
afterEach(async () => {
  await stopReceivers();
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

const SLACK = "    - type: slack\n      url: { env: SLACK_URL }\n      min_severity: error\n";
const DISCORD = "    - type: discord\n      url: { env: DISCORD_URL }\n      min_severity: error\n";

describe('channels on a SIGHUP', () => {
  it('a refused reload keeps the running channels; an accepted one swaps them at once', async () => {
    const slack = await startReceiver<unknown>({ path: '/services/T0/B0/SLACK-TOKEN-1f', status: () => 200 });
    const discord = await startReceiver<unknown>({ path: '/api/webhooks/1/DISCORD-TOKEN-2e', status: () => 204 });
    const t = tempDir('autoclaim-channels-reload-');
    cleanup = t.cleanup;
    const [alpha] = makeWallets(t.dir, ['alpha']) as [TestWallet];
    const configPath = join(t.dir, 'autoclaim.yaml');
    const yaml = (channels: string) => `${sandboxYaml([alpha])}alerts:\n  channels:\n${channels}`;
    // A reload is refused for this: a negative cap.
    const broken = (channels: string) => yaml(channels).replace('max_sol_per_action: 100', 'max_sol_per_action: -1');
    writeFileSync(configPath, yaml(SLACK));

    const signals = new EventEmitter();
    const stdout = new Capture();
    const env = { SLACK_URL: slack.url, DISCORD_URL: discord.url };
    const exit = main(['run', '--config', configPath], { env, cwd: t.dir, stdout, stderr: new Capture(), clock: systemClock, signals });
    const logged = (name: string) => parseEvents(stdout.text).filter((e) => e['event'] === name);
    try {
      await until(() => logged('daemon.started').length === 1, 'the daemon');

      // Refused, naming Discord: Slack (running) is told, Discord (only in the refused file) is not built.
      writeFileSync(configPath, broken(SLACK + DISCORD));
      signals.emit('SIGHUP');
      await slack.waitFor(() => slack.posts.some((p) => p.raw.includes('config.invalid')));
      expect(slack.posts.map((p) => p.raw).join('')).not.toContain('DISCORD-TOKEN');
      expect(logged('notify.channels_reloaded')).toEqual([]);

      // Accepted: Slack removed, Discord added.
      writeFileSync(configPath, yaml(DISCORD));
      signals.emit('SIGHUP');
      await until(() => logged('notify.channels_reloaded').length === 1, 'the channels reloaded');
      expect(logged('notify.channels_reloaded')[0]).toMatchObject({ kept: [], started: ['discord'], stopped: ['slack'] });

      // The next notice reaches Discord, and Slack no more.
      writeFileSync(configPath, broken(DISCORD).replace('poll: "0 0 1 1 *"', 'poll: "*/70 * * * *"'));
      signals.emit('SIGHUP');
      await discord.waitFor(() => discord.posts.some((p) => p.raw.includes('config.invalid')));
      expect(slack.posts).toHaveLength(1);
    } finally {
      signals.emit('SIGTERM');
      expect(await exit).toBe(0);
    }
    expect(discord.posts.length).toBeGreaterThan(0);
    expect(stdout.text).not.toMatch(/SLACK-TOKEN|DISCORD-TOKEN/);
  }, 60_000);
});
