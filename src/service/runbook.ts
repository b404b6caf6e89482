// Where a notice's runbook link points. Always absolute, so it opens from a phone's Slack as well
// as on the host: alerts.runbook_base_url (the URL of the docs directory, where operations.md is),
// else derived from package.json's `homepage` when the package has one, else the docs directory
// installed with the package, as a file:// URL (package.json's `files` ships docs/).
import { readFileSync } from 'node:fs';
import { runbookBaseProblem } from '../config/runbook-url.js';

/** The package's root: this file is src/service/runbook.ts, or dist/service/runbook.js once built. */
const PACKAGE_ROOT = new URL('../../', import.meta.url);

/** The anchors of docs/operations.md a notice names. */
export const RUNBOOK_ANCHORS = {
  /** The daemon's own alerts (alert.opened / alert.closed). */
  alerts: 'the-daemons-own-alerts',
  /** Everything else: a step refused or unknown, signing paused, a reload refused. */
  notices: 'alerts-and-what-to-do',
} as const;

/**
 * The base every runbook link starts with, ending in "/". `root` is the package's root (for tests).
 * A GitHub homepage (`https://github.com/OWNER/REPO#readme`) becomes the repository's docs/ on its
 * default branch; any other homepage gets docs/ under it.
 */
export function runbookBase(configured: string | undefined, root: URL = PACKAGE_ROOT): string {
  if (configured !== undefined) return configured.endsWith('/') ? configured : `${configured}/`;
  const homepage = readHomepage(root);
  if (homepage !== undefined) {
    const url = new URL(homepage);
    url.hash = '';
    url.search = '';
    const repo = url.pathname.replace(/\/+$/, '');
    if (url.hostname === 'github.com' && /^\/[^/]+\/[^/]+$/.test(repo)) return `${url.origin}${repo}/blob/HEAD/docs/`;
    return new URL('docs/', url.href.endsWith('/') ? url.href : `${url.href}/`).href;
  }
  return new URL('docs/', root).href;
}

/** The runbook of one notice: an alert's list, or the table of what to do. */
export function runbookUrl(base: string, anchor: keyof typeof RUNBOOK_ANCHORS): string {
  return `${base}operations.md#${RUNBOOK_ANCHORS[anchor]}`;
}

/** package.json's homepage by package root: read once, not at every notice (the supervisor asks per notice, to follow reloads of runbook_base_url). */
const homepages = new Map<string, string | undefined>();

function readHomepage(root: URL): string | undefined {
  if (!homepages.has(root.href)) homepages.set(root.href, readHomepageOnce(root));
  return homepages.get(root.href);
}

function readHomepageOnce(root: URL): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { homepage?: unknown };
    const h = pkg.homepage;
    return typeof h === 'string' && runbookBaseProblem(h) === undefined ? h : undefined;
  } catch {
    return undefined;
  }
}
