// Plain aligned columns for humans; scripts use --json. Cells often hold what a server said (tiers,
// vault names, error texts): each is passed through terminalText, so no control character in one
// reaches the terminal or breaks the columns.
import { terminalText } from './terminal-text.js';

export function table(headers: string[], rows: Array<Array<string | number | null | undefined>>): string {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : terminalText(String(c)))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}
