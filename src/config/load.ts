// The config pipeline, the same for `check`, `run` and a SIGHUP reload:
// read → parse YAML once, keeping positions (anchors, aliases, merge keys, tags and directives
// refused at their place: a config is plain data) → literal-secret scan → zod → resolve →
// cross-field checks → keys (when asked), with the wallets of a wallets_file read and checked line
// by line and added before resolving. Every problem becomes a ConfigIssue naming file:line:col and key path, and all
// of them come in one pass: what the schema refuses is set aside (salvage.ts) and the later steps
// check the rest. Nothing here throws.
import { dirname, resolve } from 'node:path';
import { isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node, type YAMLError } from 'yaml';
import type { AppConfig } from '../domain.js';
import type { ConfigIssue } from '../errors.js';
import { crossCheck } from './cross-checks.js';
import { tooDeepAt } from './nesting.js';
import { ConfigSource, IssueList, type Path, type PathSegment, type Position, type Positioned } from './positions.js';
import { readTextFile, tooBig, type TextFile } from './read-text.js';
import { FILE_LIMITS } from './read-bounded.js';
import { resolveConfig, type ResolveContext } from './resolve.js';
import { checkKeys, type KeyCheckOptions, type LoadedSecrets } from './key-check.js';
import { emptySetAside, salvageConfig, standInWallet, type SetAside } from './salvage.js';
import { ConfigSchema, type RawConfig } from './schema.js';
import { findLiteralSecrets } from './secrets.js';
import { HIDDEN_KEY, keyShown } from './shown-key.js';
import { walletsFromFile, type WalletsFromFile } from './wallets-file.js';
import { errorMap, reportSchemaProblems } from './zod-issues.js';

/** A config is a page of YAML; anything near this size is a mistake or an attack. */
const MAX_CONFIG_BYTES = FILE_LIMITS.configFile;

interface LoadOptions {
  env: NodeJS.ProcessEnv;
  /** Base for a relative `file` and for the default state path; process.cwd() when absent. */
  cwd?: string;
  /** Also load the wallet keys, the API key and the webhook secret, and report their problems. */
  keys?: KeyCheckOptions;
  /**
   * Whether the command polls on the schedule (`run`, `check`, a reload; the default). `once` does
   * not: it polls every wallet one time, so the schedule is checked as an expression but its next
   * fire times — node-cron's matcher, whose first use loads ICU's date data, memory `once` has no
   * use for — are not computed, and neither are the warnings drawn from them.
   */
  scheduled?: boolean;
}

export interface LoadResult {
  /** Undefined whenever `errors` is not empty. */
  config: AppConfig | undefined;
  errors: ConfigIssue[];
  warnings: ConfigIssue[];
  /** With `keys`, for a config without errors: what the key check read. */
  secrets?: LoadedSecrets;
}

/** Loads and checks a config file. `file` is shown in messages as given. */
export function loadConfig(file: string, opts: LoadOptions): LoadResult {
  const cwd = opts.cwd ?? process.cwd();
  const absFile = resolve(cwd, file);
  const read = readConfigText(file, absFile);
  if (typeof read !== 'string') return { config: undefined, errors: [read], warnings: [] };
  return loadConfigText(read, { file, absFile, env: opts.env, cwd, keys: opts.keys, scheduled: opts.scheduled });
}

const CONFIG_FILE: TextFile = {
  what: 'config file',
  maxBytes: MAX_CONFIG_BYTES,
  notFoundHint: 'give one with --config or $AUTOCLAIM_CONFIG',
};

function readConfigText(file: string, absFile: string): string | ConfigIssue {
  const text = readTextFile(absFile, CONFIG_FILE);
  return typeof text === 'string' ? text : { file, line: 0, col: 0, path: '', message: text.problem };
}

interface TextOptions {
  /** As shown in messages. */
  file: string;
  /** Absolute: relative paths in the config resolve against its directory. */
  absFile: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  keys?: KeyCheckOptions | undefined;
  scheduled?: boolean | undefined;
}

/** The pipeline after reading, for text already in hand. Never throws. */
export function loadConfigText(text: string, opts: TextOptions): LoadResult {
  try {
    return runPipeline(text, opts);
  } catch (err) {
    // A bug here must still read as a config problem, not a stack trace; the message is left
    // out because it could quote a value from the file.
    const why = err instanceof Error ? err.name : 'unknown failure';
    return fileIssue(opts.file, 0, `the config could not be checked (${why})`);
  }
}

function fileIssue(file: string, line: number, message: string): LoadResult {
  return { config: undefined, errors: [{ file, line, col: line > 0 ? 1 : 0, path: '', message }], warnings: [] };
}

function runPipeline(text: string, opts: TextOptions): LoadResult {
  const read = readYamlData(text, opts.file);
  if (read.issues === undefined) return { config: undefined, errors: read.errors, warnings: [] };
  if (read.data === undefined) return finish(read.issues);
  return checkData(read.data, read.issues, opts);
}

/**
 * The YAML steps of the pipeline, for any config file (autoclaim's, the signer's): size, nesting,
 * syntax, duplicate keys, plain data only. `data` is set when none of them found an error; the
 * IssueList places later issues (a schema's) in the same text.
 */
export function readYamlData(
  text: string,
  file: string,
): { data: unknown; issues: IssueList } | { data: undefined; issues: IssueList } | { data: undefined; issues: undefined; errors: ConfigIssue[] } {
  const early = (line: number, message: string) => ({ data: undefined, issues: undefined, errors: fileIssue(file, line, message).errors });
  if (text.length > MAX_CONFIG_BYTES) return early(0, tooBig(text.length, CONFIG_FILE));
  if (text.trim() === '') return early(0, 'the config file is empty');
  const deepAt = tooDeepAt(text);
  if (deepAt !== undefined) return early(deepAt, 'nested too deeply for a config file; refused');
  const { doc, lines } = positioned(text);
  const source = new ConfigSource(file, { doc, lines });
  const issues = new IssueList(source);
  for (const e of doc.errors) yamlIssue(e, source, issues, 'error');
  for (const w of doc.warnings) yamlIssue(w, source, issues, 'warning');
  duplicateKeys(doc, source, issues);
  if (doc.errors.length > 0 || issues.errors.length > 0) return { data: undefined, issues };
  if (doc.contents === null) {
    issues.errorAt({ line: 0, col: 0 }, [], 'the config file is empty (only comments)');
    return { data: undefined, issues };
  }
  plainDataOnly(doc, text, source, issues);
  if (issues.errors.length > 0) return { data: undefined, issues };
  // Refused, but the file is still read: the value is plain data, only its number is in doubt.
  leadingZeroNumbers(doc, issues);
  return { data: doc.toJS() as unknown, issues };
}

/** yaml's document of the text, every node with its range, and where its lines begin. */
function positioned(text: string): Positioned {
  // merge: false: `<<` is an ordinary key, refused by plainDataOnly with its place.
  // uniqueKeys is checked by duplicateKeys(), in linear time: yaml's own check scans the map for
  // every key.
  // resolveKnownTags: false: a tag stays a tag on its node, for plainDataOnly to refuse.
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: false, merge: false, resolveKnownTags: false });
  return { doc, lines: lineIndex(text) };
}

function finish(issues: IssueList, config?: AppConfig, secrets?: LoadedSecrets): LoadResult {
  const { errors, warnings } = issues.sorted();
  if (errors.length > 0) return { config: undefined, errors, warnings };
  return secrets === undefined ? { config, errors, warnings } : { config, errors, warnings, secrets };
}

/** The checks after YAML, the same for data read quickly or with positions. */
function checkData(data: unknown, issues: IssueList, opts: TextOptions): LoadResult {
  const { source } = issues;
  const side = walletsFromFile(data, { file: opts.file, absFile: opts.absFile, source, issues });

  const flagged = findLiteralSecrets(data, issues);
  const setAside = emptySetAside();
  const parsed = ConfigSchema.safeParse(data, { error: errorMap });
  let accepted: RawConfig | undefined;
  if (parsed.success) accepted = parsed.data;
  else {
    reportSchemaProblems(issues, parsed.error.issues, data, [], flagged);
    accepted = salvageConfig(data, parsed.error.issues, setAside);
    if (accepted === undefined) return finish(issues);
  }

  const ctx: ResolveContext = {
    source,
    issues,
    configDir: dirname(opts.absFile),
    walletsFile: side.walletsFile,
    cwd: opts.cwd,
    env: opts.env,
    broken: new Set(),
    setAside,
    scheduled: opts.scheduled ?? true,
  };
  const raw = withSideWallets(accepted, side, setAside);
  const config = resolveConfig(raw, opts.absFile, ctx);
  crossCheck(config, ctx);
  const secrets = opts.keys === undefined ? undefined : checkKeys(config, ctx, opts.keys);
  return finish(issues, config, secrets);
}

/** The inline wallets, then the side file's; a line that was not a wallet is a set-aside stand-in. */
function withSideWallets(raw: RawConfig, side: WalletsFromFile, setAside: SetAside): RawConfig {
  if (side.walletsFile === undefined) return raw;
  const inline = raw.wallets ?? [];
  const fromFile = side.wallets.map((w, k) => {
    if (w !== undefined) return w;
    setAside.wallets.add(inline.length + k);
    return standInWallet(inline.length + k);
  });
  return { ...raw, wallets: [...inline, ...fromFile] };
}

/**
 * Offsets to line:col from the text itself. yaml's own LineCounter hears only of the newlines its
 * lexer reports, and in error recovery (a broken block scalar, say) it misses some, so positions
 * drift past the end of their line; counting the newlines in the text cannot drift.
 */
function lineIndex(text: string): LineCounter {
  const lines = new LineCounter();
  lines.addNewLine(0);
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
  return lines;
}

/**
 * A config is plain data: maps, lists and scalars. Anchors, aliases and merge keys made values
 * stand for other values, which put every message about them in the wrong place and let a file
 * expand itself without bound; tags and directives change what a scalar means. Each is refused at
 * its place, with the way out ("write the values out").
 */
function plainDataOnly(doc: Document.Parsed, text: string, source: ConfigSource, issues: IssueList): void {
  const at = (offset: number, path: () => Path, message: string): void => issues.errorAt(source.positionOfOffset(offset), path, message);
  const directive = /^%(YAML|TAG)\b/m.exec(text);
  if (directive !== null) at(directive.index, () => [], `a %${directive[1]} directive is not supported in a config; remove it`);
  visit(doc, {
    Alias(_key, node, ancestors) {
      at(node.range?.[0] ?? 0, () => pathOf(ancestors, node), `alias *${shownName(node.source)}: anchors and aliases are not supported in a config; write the values out`);
    },
    Node(_key, node: Node, ancestors) {
      // yaml's range starts at the content; the anchor and the tag are written before it. The tag's
      // text is not quoted: it may be anything pasted there, a secret too.
      const offset = node.range?.[0] ?? 0;
      const path = (): Path => pathOf(ancestors, node);
      if (typeof node.anchor === 'string') at(wordBefore(text, offset, `&${node.anchor}`), path, `anchor &${shownName(node.anchor)}: anchors and aliases are not supported in a config; write the values out`);
      if (typeof node.tag === 'string') at(wordBefore(text, offset, '!'), path, 'a tag (!…) is not supported in a config; write the value plainly');
    },
    Pair(_key, pair, ancestors) {
      const key = pair.key as Node | null;
      const offset = key?.range?.[0] ?? 0;
      const path = (): Path => [...pathOf(ancestors, pair), String((key as { value?: unknown } | null)?.value)];
      if (key !== null && !isScalar(key)) at(offset, () => pathOf(ancestors, pair), 'a key must be a plain name, not a list or a map');
      else if (isScalar(key) && key.source === '<<' && key.type === 'PLAIN') at(offset, path, 'merge keys (<<) are not supported in a config; write the values out');
    },
  });
}

/**
 * `010` is 8 to a YAML 1.1 reader (PyYAML, Ansible, many editors' plugins: octal) and 10 to this
 * one (YAML 1.2); `09` is text to the first and 9 to the second. A cap, a threshold or a count
 * written so would mean one thing to whoever reviewed the file and another to the daemon: refused
 * at its place, whatever the key. The number is quoted only when short: a long string of digits
 * could be a secret pasted in the wrong place.
 */
function leadingZeroNumbers(doc: Document.Parsed, issues: IssueList): void {
  visit(doc, {
    Scalar(key, node, ancestors) {
      if (key === 'key' || node.type !== 'PLAIN' || typeof node.source !== 'string') return;
      const m = /^([-+]?)0+([0-9]+)$/.exec(node.source);
      if (m === null) return;
      const short = node.source.length <= 8;
      const sign = m[1] === '-' ? '-' : '';
      const octal = /^[0-7]+$/.test(node.source.replace(/^[-+]/, ''));
      const shown = short ? `${node.source} ` : '';
      const v11 = octal ? `octal${short ? ` (${sign}${parseInt(node.source.replace(/^[-+]/, ''), 8)})` : ''}` : 'text';
      const v12 = short ? ` (${sign}${m[2] ?? ''})` : '';
      // At its key, as every other problem with a value is.
      issues.error(
        pathOf(ancestors, node),
        `${shown}has a leading zero, which YAML 1.1 reads as ${v11} and YAML 1.2 as decimal${v12}: write the number without it, or quote it if it is text`,
      );
    },
  });
}

/** The key path of `node` from the visitor's ancestors: a pair gives its key, a list the item's index. */
function pathOf(ancestors: readonly unknown[], node: unknown): Path {
  const path: PathSegment[] = [];
  ancestors.forEach((a, i) => {
    const child = ancestors[i + 1] ?? node;
    if (isPair(a) && child === a.value) path.push(String((a.key as { value?: unknown } | null)?.value));
    else if (isSeq(a)) path.push(a.items.indexOf(child));
  });
  return path;
}

/** Where the last `prefix…` word before `offset` starts (an anchor or a tag written before its node). */
function wordBefore(text: string, offset: number, prefix: string): number {
  const i = text.lastIndexOf(prefix, offset);
  if (i < 0) return offset;
  let start = i;
  while (start > 0 && !/\s/.test(text[start - 1] ?? ' ')) start--;
  return start;
}

/** An anchor or alias name as an issue may quote it (shown-key.ts). */
function shownName(name: string): string {
  return keyShown(name) ? name : HIDDEN_KEY;
}

/**
 * Keys are compared as the JS object they become will see them: `1:` and `"1":` are one key. Each
 * later copy is reported at its place, naming the line of the first.
 */
function duplicateKeys(doc: Document.Parsed, source: ConfigSource, issues: IssueList): void {
  visit(doc, {
    Map(_key, map) {
      const first = new Map<string, Position>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const name = String(pair.key.value);
        const at = pair.key.range?.[0] ?? 0;
        const here = source.positionOfOffset(at);
        const earlier = first.get(name);
        if (earlier === undefined) {
          first.set(name, here);
          continue;
        }
        const quoted = keyShown(name) ? `"${name}"` : HIDDEN_KEY;
        const message = earlier.line !== here.line ? `duplicate key ${quoted} (first at line ${earlier.line})` : `duplicate key ${quoted}`;
        issues.errorAt(here, () => source.pathAtOffset(at), message);
      }
    },
  });
}

const YAML_MESSAGES: Partial<Record<YAMLError['code'], string>> = {
  TAB_AS_INDENT: 'a tab is used for indentation; YAML indents with spaces',
  MULTIPLE_DOCS: 'the file holds more than one YAML document (---); a config is one document',
  BAD_INDENT: undefined,
};

function yamlIssue(e: YAMLError, source: ConfigSource, issues: IssueList, kind: 'error' | 'warning'): void {
  const position = source.positionOfOffset(e.pos[0]);
  const path: Path = [];
  const message = YAML_MESSAGES[e.code] ?? e.message;
  if (kind === 'error') issues.errorAt(position, path, message);
  else issues.warnAt(position, path, message);
}
