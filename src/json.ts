// JSON text of values that may hold bigints (lamports), for logs, the database and the CLI. A
// domain helper, not a logging one: the store and the webhook write it too.

/** JSON.stringify that writes bigints as decimal strings (lamports in logs and in the database). */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}
