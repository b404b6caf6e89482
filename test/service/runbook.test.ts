// Runbook links are absolute (issue 27): alerts.runbook_base_url when set (a relative or odd URL
// is refused, placed, as every config error is), else derived from package.json's homepage, else
// the docs installed with the package as a file:// URL — which must exist, so the link opens on the
// host. Every notice but an acknowledgement carries one.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runbookBase, runbookUrl } from '../../src/service/runbook.js';
import { Redactor } from '../../src/log/redact.js';
import { createFailureWebhook, type FailureWebhook } from '../../src/service/webhook-events.js';
import { captureLog } from '../support/log.js';
import { BASE, formatted, TempDir } from '../config/helpers.js';
import { startReceiver, stopReceivers } from './webhook-receiver.js';

let tmp: string | undefined;
let dir: TempDir | undefined;
let hook: FailureWebhook | undefined;
afterEach(async () => {
  await hook?.close(1000);
  hook = undefined;
  await stopReceivers();
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
  dir?.remove();
  dir = undefined;
});

/** A package root holding a package.json with this homepage (none when undefined). */
function root(homepage: string | undefined): URL {
  tmp = mkdtempSync(join(tmpdir(), 'autoclaim-runbook-'));
  writeFileSync(join(tmp, 'package.json'), JSON.stringify({ name: 'autoclaim', ...(homepage === undefined ? {} : { homepage }) }));
  return pathToFileURL(`${tmp}/`);
}

describe('runbook links', () => {
  it('takes alerts.runbook_base_url as the docs directory', () => {
    expect(runbookBase('https://ops.example.org/autoclaim/docs')).toBe('https://ops.example.org/autoclaim/docs/');
    expect(runbookUrl(runbookBase('https://ops.example.org/d/'), 'alerts')).toBe('https://ops.example.org/d/operations.md#the-daemons-own-alerts');
  });

  it("falls back to package.json's homepage, then to the installed docs as a file:// URL", () => {
    expect(runbookBase(undefined, root('https://github.com/acme/autoclaim#readme'))).toBe('https://github.com/acme/autoclaim/blob/HEAD/docs/');
    expect(runbookBase(undefined, root('https://autoclaim.example.org/'))).toBe('https://autoclaim.example.org/docs/');
    const r = root(undefined);
    expect(runbookBase(undefined, r)).toBe(new URL('docs/', r).href);
    expect(runbookBase(undefined, root('not a url'))).toMatch(/^file:\/\/\/.*\/docs\/$/);
  });

  it("this package's own default is absolute and opens: its docs/operations.md is there", () => {
    const base = runbookBase(undefined);
    expect(base).toMatch(/^(https?|file):\/\//);
    if (base.startsWith('file:')) expect(existsSync(fileURLToPath(new URL('operations.md', base)))).toBe(true);
  });

  it('refuses a relative or non-web runbook_base_url, placed', () => {
    dir = new TempDir();
    dir.write('config.yaml', `${BASE}alerts:\n  runbook_base_url: docs/\n`);
    expect(formatted(dir.load('config.yaml')).errors).toEqual([expect.stringMatching(/^config\.yaml:\d+:\d+ alerts\.runbook_base_url: expected an absolute URL/) as unknown]);
    dir.write('config.yaml', `${BASE}alerts:\n  runbook_base_url: "javascript:alert(1)"\n`);
    expect(formatted(dir.load('config.yaml')).errors.join('\n')).toMatch(/alerts\.runbook_base_url: expected an https, http or file URL, got javascript:/);
    dir.write('config.yaml', `${BASE}alerts:\n  runbook_base_url: https://ops.example.org/docs\n`);
    expect(dir.load('config.yaml').config?.alerts.runbookBaseUrl).toBe('https://ops.example.org/docs');
  });

  it('every notice but an acknowledgement carries its runbook, absolute', async () => {
    const r = await startReceiver<{ events: Array<{ event: string; details: Record<string, unknown> }> }>({ path: '/h', status: () => 200 });
    hook = createFailureWebhook({ env: { AUTOCLAIM_WEBHOOK_URL: r.url }, logger: captureLog().logger, redactor: new Redactor(), events: () => ['rejected', 'stale', 'acknowledged'], runbookBase: () => runbookBase(undefined), minIntervalMs: 0 });
    if (hook === undefined) throw new Error('no webhook');
    hook.onStep({ kind: 'claim', wallet: 'w', plan: 1, step: 1, state: 'rejected' });
    hook.alerts.notify({ key: 'wallet_stale:w:opened', event: 'alert.opened', text: 'wallet w: stale', details: { alert: 'wallet_stale', wallet: 'w' } });
    hook.onStep({ kind: 'claim', wallet: 'w', plan: 1, step: 2, state: 'acknowledged', amountLamports: 1n });
    await r.waitFor(() => r.posts.reduce((n, p) => n + p.body.events.length, 0) >= 3);
    const runbooks = Object.fromEntries(r.posts.flatMap((p) => p.body.events).map((e) => [e.event, e.details['runbook']]));
    expect(runbooks['action.rejected']).toBe(`${runbookBase(undefined)}operations.md#alerts-and-what-to-do`);
    expect(runbooks['alert.opened']).toBe(`${runbookBase(undefined)}operations.md#the-daemons-own-alerts`);
    expect(runbooks['action.acknowledged']).toBeUndefined();
    for (const link of Object.values(runbooks)) if (typeof link === 'string') expect(new URL(link).protocol).toMatch(/^(https?|file):$/);
  });
});
