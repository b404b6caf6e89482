// alerts.runbook_base_url (and a package.json homepage standing in for it): a runbook link must be
// absolute and open somewhere, so only an absolute https, http or file URL is taken.

/** Why alerts.runbook_base_url is refused: not an absolute https, http or file URL. Undefined when it is fine. */
export function runbookBaseProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'expected an absolute URL (https://…, http://… or file:///…)';
  }
  return ['https:', 'http:', 'file:'].includes(url.protocol) ? undefined : `expected an https, http or file URL, got ${url.protocol}`;
}
