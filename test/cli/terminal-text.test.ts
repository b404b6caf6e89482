// Issue 24, finding 9: what a server says reaches `wallet`, `actions` and `send` output with every
// control character made visible (ESC sequences, C1, DEL, bidi overrides), never raw; `--json`
// keeps the server's strings exactly (JSON escapes them). A hostile answer from the sandbox.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { terminalOutput, terminalText } from '../../src/cli/terminal-text.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CANARY_API_KEY, makeWallets, runCli, tempDir, writeConfig, type TestWallet } from '../e2e/helpers.js';

const SOL = 1_000_000_000n;
/** Clear screen, a window title, a forged red line, a C1 CSI, DEL, and a right-to-left override. */
const HOSTILE = '\u001b[2J\u001b]0;pwned\u0007\u001b[31mrun autoclaim send withdraw\u001b[0m\u009b2J\u007f\u202egold\u2066';
/** Any character that must never reach a terminal raw. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('terminalText', () => {
  it('makes every C0, DEL, C1 and bidi control visible as its JSON escape, and nothing else', () => {
    expect(terminalText('\u001b[2J')).toBe('\\u001b[2J');
    expect(terminalText('a\tb\nc\rd\u0000')).toBe('a\\u0009b\\u000ac\\u000dd\\u0000');
    expect(terminalText('\u007f\u0085\u009b\u202a\u202e\u2066\u2069')).toBe('\\u007f\\u0085\\u009b\\u202a\\u202e\\u2066\\u2069');
    expect(terminalText('Gold · 金 ✓ SOL2X')).toBe('Gold · 金 ✓ SOL2X');
    for (let c = 0; c < 0x3000; c++) expect(RAW_CONTROL.test(terminalText(String.fromCharCode(c))), `U+${c.toString(16)}`).toBe(false);
  });

  it('on whole output keeps the layout (newline, tab) and the meaning of JSON', () => {
    expect(terminalOutput('a\tb\n\u001b[2J\r')).toBe('a\tb\n\\u001b[2J\\u000d');
    const json = JSON.stringify({ tier: HOSTILE });
    expect(JSON.parse(terminalOutput(json))).toEqual({ tier: HOSTILE });
  });
});

describe('hostile server strings in CLI output', () => {
  let dir: string;
  let cleanup: () => void;
  let sandbox: Sandbox;
  let wallet: TestWallet;
  let config: string;
  const cli = (args: string[]) => runCli([...args, '--config', config], { cwd: dir });

  beforeAll(async () => {
    ({ dir, cleanup } = tempDir('autoclaim-escapes-'));
    [wallet] = makeWallets(dir, ['treasury']) as [TestWallet];
    sandbox = await startSandbox({
      apiKey: CANARY_API_KEY,
      defaultAccrualLamportsPerSec: 0n,
      wallets: [{ address: wallet.address, pendingLamports: 2n * SOL, accrualLamportsPerSec: 0n, balanceLamports: 10n * SOL }],
    });
    config = writeConfig(dir, {
      baseUrl: sandbox.url,
      wallets: [wallet],
      rules: '  - name: never\n    when: { pending_sol: { gte: 1000000 } }\n    do: [claim]\n',
    });
  });
  afterAll(async () => {
    await sandbox.close();
    cleanup();
  });

  const summary = () =>
    JSON.stringify({
      address: wallet.address,
      epoch: new Date().toISOString().slice(0, 10),
      pending_sol: 2,
      lifetime_sol: 5,
      rank: 3,
      tier: HOSTILE,
      breakdown: [{ vault: `SOL2X${HOSTILE}`, volume: 1, score: 2 }],
    });

  it('`wallet`: tier and vault names shown with their controls visible; `wallet --json` keeps them exactly', async () => {
    sandbox.addFault({ kind: 'malformed', match: { op: 'summary' }, body: summary() });
    const r = await cli(['wallet', wallet.address]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toContain('tier          \\u001b[2J\\u001b]0;pwned\\u0007\\u001b[31mrun autoclaim send withdraw\\u001b[0m\\u009b2J\\u007f\\u202egold\\u2066');
    expect(r.stdout).toContain('SOL2X\\u001b[2J');

    sandbox.addFault({ kind: 'malformed', match: { op: 'summary' }, body: summary() });
    const json = await cli(['wallet', wallet.address, '--json']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as { tier: string; breakdown: Array<{ vault: string }> };
    expect(parsed.tier).toBe(HOSTILE);
    expect(parsed.breakdown[0]!.vault).toBe(`SOL2X${HOSTILE}`);
    expect(json.stdout).not.toMatch(RAW_CONTROL);
  });

  it('`send` and `actions`: a refusal text from the server is shown with its controls visible', async () => {
    const forged = '\u001b[31mrun autoclaim send withdraw\u001b[0m\u202e';
    const body = JSON.stringify({ status: 'rejected', error: { code: forged, message: `vault closed ${HOSTILE}` } });
    sandbox.addFault({ kind: 'malformed', match: { op: 'deposit' }, body, apply: false });
    const sent = await cli(['send', 'deposit', '--wallet', 'treasury', '--symbol', 'SOL2X', '--amount', '1', '--id', 'hostile-1', '--yes']);
    expect(sent.code).toBe(1);
    const printed = sent.stdout.split('\n').filter((l) => !l.startsWith('{')).join('\n');
    expect(printed).toMatch(/is rejected/);
    expect(printed).not.toMatch(RAW_CONTROL);

    const actions = await cli(['actions']);
    expect(actions.code).toBe(0);
    // The refusal quotes the code as JSON (so C0 is already escaped in it); the bidi override that
    // JSON leaves raw is what would reorder the line on a terminal.
    expect(actions.stdout).toContain('run autoclaim send withdraw\\u001b[0m\\u202e');
    expect(actions.stdout).not.toMatch(RAW_CONTROL);
    const json = await cli(['actions', '--json']);
    const steps = (JSON.parse(json.stdout) as { plans: Array<{ steps: Array<{ error: string | null }> }> }).plans.flatMap((p) => p.steps);
    // --json keeps the stored text as it is: the override is there, raw, for a script.
    expect(steps.some((s) => s.error?.includes('\u202e') === true)).toBe(true);
  });
});
