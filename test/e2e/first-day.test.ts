// The first day against a service whose header prefix and claim message are not autoclaim's
// defaults (issue 27; the README's first-day section): config → check → doctor (a warning, exit
// 1) → doctor --probe (names the prefix) → fix → doctor --probe (the prefix is right) → run → a
// claim. The service is the sandbox on loopback, configured as such a service.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, configYaml, makeWallets, runCli, spawnCli, tempDir, type Child } from './helpers.js';

const CLAIM_ONLY = `  - name: sweep
    when:
      pending_sol: { gte: 0.000000001 }
    do:
      - claim
`;

describe('a first day against a service with its own prefix and claim message', () => {
  let sandbox: Sandbox | undefined;
  let child: Child | undefined;
  let cleanup: (() => void) | undefined;

  afterEach(async () => {
    await child?.stop('SIGTERM');
    await sandbox?.close();
    cleanup?.();
  });

  it('doctor warns, the probe names the prefix, the fix lets the first claim through', async () => {
    const t = tempDir('autoclaim-first-day-');
    cleanup = t.cleanup;
    const wallets = makeWallets(t.dir, ['alpha']);
    sandbox = await startSandbox({ apiKey: CANARY_API_KEY, headerPrefix: 'x-acme', claimMessage: 'claim:{wallet}:{ts}', epochMs: 86_400_000 });
    const config = join(t.dir, 'autoclaim.yaml');
    const write = (apiExtra: string) => writeFileSync(config, configYaml({ baseUrl: sandbox!.url, wallets, rules: CLAIM_ONLY, apiExtra }));
    const cli = (...argv: string[]) => runCli([...argv, '--config', config], { cwd: t.dir });

    // Day one, the defaults.
    write('');
    expect((await cli('check')).code).toBe(0);
    const doctor = await cli('doctor');
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/WARNING\s+signing\s+api\.header_prefix is x-svc, autoclaim's default/);
    expect(sandbox.stats().byOp).not.toHaveProperty('claim');
    expect((await cli('doctor', '--accept-defaults')).code).toBe(0);

    const probe = await cli('doctor', '--probe');
    expect(probe.code).toBe(1);
    expect(probe.stdout).toMatch(/probe claim \(signed with a wrong key on purpose\): the service said "HTTP 400 missing_header missing x-acme-ts header" \(x-request-id [0-9a-f-]+\): it says the headers are missing or malformed: api\.header_prefix \(x-svc\) is not the service's/);
    // Nothing moved: every probe was refused.
    expect(sandbox.ledger()).toEqual([]);

    // The fix the probe pointed at; the claim message from the service's support.
    write('  header_prefix: x-acme\n  endpoints:\n    claim: { message: "claim:{wallet}:{ts}" }\n');
    const again = await cli('doctor', '--probe');
    expect(again.stdout).toMatch(/probe claim .*"HTTP 401 invalid_signature signature does not verify[^"]*".*: it read the x-acme-ts and x-acme-wallet headers and refused the signature, as it should: the prefix is right/);
    expect(again.code).toBe(0);
    expect(sandbox.ledger()).toEqual([]);

    child = spawnCli(['run', '--config', config], { cwd: t.dir });
    const ack = await child.waitFor((e) => e['event'] === 'action.acknowledged');
    expect(ack).toMatchObject({ wallet: 'alpha' });
    expect(sandbox.ledger().map((e) => e.op)).toEqual(['claim']);
  }, 60_000);
});
