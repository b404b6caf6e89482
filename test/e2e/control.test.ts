// The short fix loop and the kill switch against a real `run` process (issue 27): a wrong header
// prefix pauses signing and `status` says why in the server's words; the SIGHUP that fixes it
// polls the paused wallet at once (the schedule here never fires) and the claim goes through;
// `autoclaim pause` / `poll` / `resume` reach the daemon by their files and signals.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxYaml } from '../daemon/in-process.js';
import { makeWallets, runCli, spawnCli, tempDir, type Child, type TestWallet } from './helpers.js';

interface StatusJson {
  signing: { paused: boolean; daemon: { running: boolean }; holds: Array<Record<string, unknown>>; pauseRecord: Record<string, unknown> | null };
}

describe('a running daemon: fix loop, poll now, pause and resume', () => {
  let child: Child | undefined;
  let cleanup: (() => void) | undefined;

  afterEach(async () => {
    await child?.stop('SIGTERM');
    cleanup?.();
  });

  it('status names the refusal; a reload re-polls at once; pause holds signing; poll asks now; resume lifts', async () => {
    const t = tempDir('autoclaim-control-');
    cleanup = t.cleanup;
    const [w] = makeWallets(t.dir, ['alpha']) as [TestWallet];
    const config = join(t.dir, 'autoclaim.yaml');
    const yaml = (api: string) => sandboxYaml([w], { threshold: '0.000000001', api });
    writeFileSync(config, yaml('  header_prefix: x-wrong\n'));
    const cli = (...argv: string[]) => runCli([...argv, '--config', config], { cwd: t.dir });
    const status = async () => JSON.parse((await cli('status', '--json')).stdout) as StatusJson;

    child = spawnCli(['run', '--config', config], { cwd: t.dir });
    await child.waitFor((e) => e['event'] === 'signing.paused');
    // The daemon's file is rewritten on the signing:paused event; status reads it.
    await child.waitFor((e) => e['event'] === 'action.failed');
    let s = await status();
    for (let i = 0; i < 50 && !s.signing.paused; i++) s = await status();
    expect(s.signing).toMatchObject({ paused: true, daemon: { running: true } });
    expect(s.signing.holds[0]).toMatchObject({ wallet: 'alpha', source: 'refusal', hint: 'headers', code: 'missing_header', http_status: 400 });
    expect(String(s.signing.holds[0]?.['fix'])).toMatch(/api\.header_prefix/);
    const text = (await cli('status')).stdout;
    expect(text).toMatch(/signing PAUSED for wallet alpha since .*the server said: HTTP 400 missing_header missing x-svc-ts header/);

    // The fix, and a reload: the paused wallet is polled at once, not at its next scheduled turn.
    writeFileSync(config, yaml(''));
    child.proc.kill('SIGHUP');
    await child.waitFor((e) => e['event'] === 'action.acknowledged');

    // The kill switch by command: recorded with who, told to the daemon.
    const paused = await runCli(['pause', '--reason', 'drill', '--config', config], { cwd: t.dir, env: { USER: 'ops' } });
    expect(paused.code).toBe(0);
    expect(paused.stdout).toMatch(/signing paused by ops@.*told the daemon \(pid \d+\)/);
    await child.waitFor((e) => e['event'] === 'signing.kill_switch_on');
    s = await status();
    expect(s.signing.holds).toMatchObject([{ wallet: 'all', source: 'kill_switch', fix: 'autoclaim resume' }]);
    expect(s.signing.pauseRecord).toMatchObject({ paused: true, by: expect.stringMatching(/^ops@/) as unknown, reason: 'drill' });

    // Poll now: the daemon polls the wallet on request; paused, it decides (dry) and signs nothing.
    expect((await cli('poll', '--wallet', 'alpha')).code).toBe(0);
    await child.waitFor((e) => e['event'] === 'poll.requested');
    await child.waitFor((e, i) => e['event'] === 'poll.ok' && i > child!.events().findIndex((x) => x['event'] === 'poll.requested'));
    expect((await cli('poll', '--wallet', 'nobody')).code).toBe(2);

    expect((await cli('resume')).code).toBe(0);
    await child.waitFor((e) => e['event'] === 'signing.kill_switch_off');
    s = await status();
    expect(s.signing.paused).toBe(false);

    child.proc.kill('SIGTERM');
    expect((await child.exited).code).toBe(0);
    // Stopped: no daemon, and poll says so.
    expect((await cli('status', '--json')).stdout).toMatch(/"running": ?false/);
    expect((await cli('poll')).code).toBe(1);
  }, 60_000);
});
