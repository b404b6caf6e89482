// Turns any error into one line for the operator and an exit code. No stack traces for the
// expected failures: a bad config, a locked state file, an unreachable API.
import { ApiError, AutoclaimError, ConfigError, KeyError, StateError, formatIssue } from '../errors.js';
import { EXIT, type ExitCode } from './exit-codes.js';
import { terminalText } from './terminal-text.js';

export function describeFailure(err: unknown, redact: (text: string) => string = (t) => t): { code: ExitCode; lines: string[] } {
  const { code, lines } = describe(err);
  // An error's text can quote a server (an ApiError's body, a refusal): one line each, no controls.
  // Redacted whole first: a cut or an escape would leave a secret in a spelling no longer registered.
  return { code, lines: lines.flatMap((l) => redact(l).split('\n')).map(terminalText) };
}

function describe(err: unknown): { code: ExitCode; lines: string[] } {
  if (err instanceof ConfigError) return { code: EXIT.CONFIG, lines: err.issues.map(formatIssue) };
  if (err instanceof KeyError) return { code: EXIT.CONFIG, lines: err.message.split('\n') };
  if (err instanceof StateError && err.code === 'STATE_LOCKED') return { code: EXIT.LOCKED, lines: [err.message] };
  if (err instanceof ApiError) {
    const extra = err.issues.length > 0 ? err.issues.map((i) => `  ${i}`) : [];
    return { code: EXIT.FAILURE, lines: [err.message, ...extra] };
  }
  if (err instanceof AutoclaimError) return { code: EXIT.FAILURE, lines: [`${err.message}`] };
  if (err instanceof Error) return { code: EXIT.FAILURE, lines: [`unexpected error: ${err.stack ?? err.message}`] };
  return { code: EXIT.FAILURE, lines: [`unexpected error: ${String(err)}`] };
}
