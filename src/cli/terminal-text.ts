// What a server says, made safe to print on a terminal (issue 24, finding 9). A tier, a vault name
// or an error text holding ESC sequences cleared the screen, set the window title or forged a red
// "run autoclaim send withdraw" line in `wallet` and `actions`. Every control character — C0 (tab
// and newline included: inside one value they forge lines and columns), DEL, C1 — and the bidi
// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069, which reorder what is shown)
// is made visible as its JSON escape (`\u001b`): an ESC sequence is left as harmless text, and the
// operator still sees that the server sent one. `--json` output needs none of this: JSON escapes
// C0 itself, and the same `\uXXXX` text, where it is applied to JSON, is the escape of the same
// character (so a JSON reader gets the server's string back unchanged).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** The same without tab and newline: for whole lines of output, whose layout those are. */
// eslint-disable-next-line no-control-regex -- as above
const CONTROLS_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const visible = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** One value from outside (a server string, a stored error): every control made visible. */
export function terminalText(value: string): string {
  return value.replace(CONTROLS, visible);
}

/**
 * Whole lines of a command's output, as they reach the terminal (cli/context.ts): the last line of
 * defence for a value no caller passed through terminalText; the output's own newlines and tabs stay.
 */
export function terminalOutput(text: string): string {
  return text.replace(CONTROLS_BUT_LAYOUT, visible);
}
