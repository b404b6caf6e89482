// Demo keys are written only into the demo key folder, `demo-keys` beside the state file (issue 13):
// `check` (or a start) on a demo config with a typo in a key path reports the key as missing at its
// place and writes nothing there, not even the folder the typo names.
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demoWalletAddress } from '../../src/sandbox/derive.js';
import { runCli, tempDir } from '../e2e/helpers.js';

function demoConfig(keyPaths: string[]): string {
  const wallets = keyPaths.map((p, i) => `  - name: w${i}\n    address: ${demoWalletAddress(i)}\n    key: { file: ${p} }\n`).join('');
  return `api:
  base_url: sandbox
wallets:
${wallets}rules:
  - name: compound
    when:
      pending_sol: { gte: 0.05 }
    do: [claim]
safety:
  max_sol_per_action: 10
`;
}

describe('sandbox demo keys', () => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir('autoclaim-demo-keys-'));
    mkdirSync(join(dir, 'config'));
  });
  afterEach(() => cleanup());

  it('are written into demo-keys beside the state file, as npm start lays them out, mode 0600', async () => {
    // As in the shipped config: keys at ../var/demo-keys from config/, state at ./var under cwd.
    writeFileSync(join(dir, 'config', 'autoclaim.yaml'), demoConfig(['../var/demo-keys/w0.json', '../var/demo-keys/w1.json']));
    const r = await runCli(['check', '--config', join(dir, 'config', 'autoclaim.yaml')], { cwd: dir });
    expect(r.stderr).not.toContain('demo_key_skipped');
    expect(r.code).toBe(0);
    expect(readdirSync(join(dir, 'var', 'demo-keys')).sort()).toEqual(['w0.json', 'w1.json']);
    expect(statSync(join(dir, 'var', 'demo-keys', 'w0.json')).mode & 0o777).toBe(0o600);
  });

  it('are not written at a typo path: check reports the missing key at the wallet’s key: and exits 78', async () => {
    writeFileSync(join(dir, 'config', 'autoclaim.yaml'), demoConfig(['../var/demo-keys/w0.json', '../var/demo-kyes/w1.json']));
    const r = await runCli(['check', '--config', join(dir, 'config', 'autoclaim.yaml')], { cwd: dir });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`${join(dir, 'config', 'autoclaim.yaml')}:9:5 wallets[1].key: wallet w1: key file ${join(dir, 'var', 'demo-kyes', 'w1.json')} does not exist`);
    expect(existsSync(join(dir, 'var', 'demo-kyes'))).toBe(false);
    // The well-placed one is written, as before.
    expect(existsSync(join(dir, 'var', 'demo-keys', 'w0.json'))).toBe(true);
    // And a start refuses the same way.
    const once = await runCli(['once', '--config', join(dir, 'config', 'autoclaim.yaml')], { cwd: dir });
    expect(once.code).toBe(78);
    expect(existsSync(join(dir, 'var', 'demo-kyes'))).toBe(false);
  });

  it('are not written anywhere else either: another folder, or the state folder itself', async () => {
    writeFileSync(join(dir, 'config', 'autoclaim.yaml'), demoConfig([join(dir, 'elsewhere', 'w0.json'), '../var/w1.json']));
    const r = await runCli(['check', '--config', join(dir, 'config', 'autoclaim.yaml')], { cwd: dir });
    expect(r.code).toBe(78);
    expect(existsSync(join(dir, 'elsewhere'))).toBe(false);
    expect(existsSync(join(dir, 'var', 'w1.json'))).toBe(false);
    expect(r.stderr).toMatch(/demo keys are written only into .*var\/demo-keys/);
  });
});
