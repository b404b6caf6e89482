// Every `autoclaim <command> --flag` the operator docs write (in backticks, and the README's command
// table) is a flag that command takes, and every command the CLI has is a row of the README's
// table. Asked of the built CLI's own --help, so a renamed or dropped flag fails here instead of
// leaving a runbook line that stops with "unknown option" in the middle of an incident.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, REPO } from '../e2e/helpers.js';

const helps = new Map<string, string>();
/** `autoclaim <words> --help`, once each; bounded, so a --help swallowed as an option's value cannot start a server and hang. */
function help(words: string[]): string {
  const key = words.join(' ');
  const text = helps.get(key) ?? execFileSync(process.execPath, [CLI, ...words, '--help'], { encoding: 'utf8', timeout: 20_000 });
  helps.set(key, text);
  return text;
}
const flags = (text: string) => [...text.matchAll(/--[a-z][a-z-]*/g)].map((m) => m[0]);
const ROOT = help([]);
const COMMANDS = [...ROOT.matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1] ?? '').filter((c) => c !== 'help');
const README = readFileSync(join(REPO, 'README.md'), 'utf8');

/** The subcommands `autoclaim <command> --help` lists under "Commands:" (none for most). */
function subcommands(command: string): string[] {
  const listed = help([command]).split('\nCommands:\n')[1] ?? '';
  return [...listed.matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1] ?? '').filter((c) => c !== 'help');
}

/** The command words and the text of each `autoclaim …` span in the docs, and each row of the README's table. */
function invocations(): Array<{ file: string; text: string }> {
  const found: Array<{ file: string; text: string }> = [];
  for (const file of ['README.md', 'docs/operations.md', 'docs/keys.md']) {
    const text = readFileSync(join(REPO, file), 'utf8');
    for (const m of text.matchAll(/`(?:npx |sudo )?autoclaim ([^`]+)`/g)) found.push({ file, text: m[1] ?? '' });
  }
  for (const m of README.matchAll(/^\| `([a-z][^`]*)` \|/gm)) found.push({ file: 'README.md (command table)', text: m[1] ?? '' });
  return found;
}

describe('the commands and flags the docs give', () => {
  it('every command is in the README table', () => {
    expect(COMMANDS.length).toBeGreaterThan(15);
    const rows = new Set([...README.matchAll(/^\| `([a-z]+)/gm)].map((m) => m[1]));
    expect(COMMANDS.filter((c) => !rows.has(c))).toEqual([]);
  });

  it('every flag written after a command is one that command (or the program) takes', () => {
    const known = new Map<string, Set<string>>();
    const unknown: string[] = [];
    let checked = 0;
    for (const { file, text } of invocations()) {
      const [first, second] = text.split(/\s+/);
      if (first === undefined || !COMMANDS.includes(first)) continue;
      // A subcommand (actions resolve, signer prune, service install) when the command lists it.
      const words = second !== undefined && /^[a-z]+$/.test(second) && subcommands(first).includes(second) ? [first, second] : [first];
      const key = words.join(' ');
      if (!known.has(key)) known.set(key, new Set([...flags(help(words)), ...flags(ROOT)]));
      for (const f of flags(text)) {
        checked++;
        if (!known.get(key)?.has(f)) unknown.push(`${file}: autoclaim ${text}: ${f}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(unknown).toEqual([]);
  });
});
