// alerts.runbook_base_url (and a package.json homepage standing in for it): a runbook link must be
// absolute and open somewhere, so only an absolute https, http or file URL is taken, and one with
// no credentials in it: every notice carries it.
import { hasUrlCredentials, URL_CREDENTIALS_PROBLEM } from './url-credentials.js';

/** Why alerts.runbook_base_url is refused: not an absolute https, http or file URL. Undefined when it is fine. */
export function runbookBaseProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'expected an absolute URL (https://…, http://… or file:///…)';
  }
  if (!['https:', 'http:', 'file:'].includes(url.protocol)) return `expected an https, http or file URL, got ${url.protocol}`;
  return hasUrlCredentials(text) ? URL_CREDENTIALS_PROBLEM : undefined;
}
