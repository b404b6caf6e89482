// JSON text of values that may hold bigints (lamports), for logs, the database and the CLI. A
// domain helper, not a logging one: the store and the webhook write it too. And the one way a
// place in a parsed document is written, for config issues and for API answers alike.

/** JSON.stringify that writes bigints as decimal strings (lamports in logs and in the database). */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * `rules[0].when.pending_sol`, `breakdown[0].vault`; keys that are not identifiers are quoted:
 * `api["odd key"]`. The root is '' (callers name it: "body" for an API answer).
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && PLAIN_KEY.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}
