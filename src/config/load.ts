// The config pipeline, the same for `check`, `run` and a SIGHUP reload:
// read → parse YAML (quickly, without positions, where quick-read.ts takes the text; else with
// positions kept, and then its YAML problems reported) → literal-secret scan → zod → resolve
// → cross-field checks → keys (when asked), with the wallets of a wallets_file read and checked line by line and added
// before resolving. Every problem becomes a ConfigIssue naming file:line:col and key path, and all
// of them come in one pass: what the schema refuses is set aside (salvage.ts) and the later steps
// check the rest. Nothing here throws.
import { dirname, resolve } from 'node:path';
import type { Document, LineCounter, YAMLError } from 'yaml';
import type { AppConfig } from '../domain.js';
import type { ConfigIssue } from '../errors.js';
import { crossCheck } from './cross-checks.js';
import { tooDeepAt } from './nesting.js';
import { ConfigSource, IssueList, type Path, type Position, type Positioned } from './positions.js';
import { QuickSource, quickRead } from './quick-read.js';
import { readTextFile, tooBig, type TextFile } from './read-text.js';
import { FILE_LIMITS } from './read-bounded.js';
import { resolveConfig, type ResolveContext } from './resolve.js';
import { checkKeys, type KeyCheckOptions, type LoadedSecrets } from './key-check.js';
import { emptySetAside, salvageConfig, standInWallet, type SetAside } from './salvage.js';
import { ConfigSchema, type RawConfig } from './schema.js';
import { findLiteralSecrets } from './secrets.js';
import { HIDDEN_KEY, keyShown } from './shown-key.js';
import { walletsFromFile, type WalletsFromFile } from './wallets-file.js';
import { yamlLib } from './yaml-lib.js';
import { errorMap, reportSchemaProblems } from './zod-issues.js';

/** A config is a page of YAML; anything near this size is a mistake or an attack. */
const MAX_CONFIG_BYTES = FILE_LIMITS.configFile;
/** Anchors are rarely needed in a config; a few dozen alias expansions is plenty (billion laughs). */
const MAX_ALIAS_COUNT = 50;

interface LoadOptions {
  env: NodeJS.ProcessEnv;
  /** Base for a relative `file` and for the default state path; process.cwd() when absent. */
  cwd?: string;
  /** Also load the wallet keys, the API key and the webhook secret, and report their problems. */
  keys?: KeyCheckOptions;
  /**
   * Whether the command polls on the schedule (`run`, `check`, a reload; the default). `once` does
   * not: it polls every wallet one time, so the schedule is checked as an expression but its next
   * fire times — node-cron's matcher, whose first use loads ICU's date data, ~7 MB of a 100-wallet
   * `once`'s ~78 MB — are not computed, and neither are the warnings drawn from them.
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
  /** Always read with positions, never quickly: for the tests that hold the two reads alike. */
  positioned?: boolean | undefined;
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
  if (text.length > MAX_CONFIG_BYTES) return fileIssue(opts.file, 0, tooBig(text.length, CONFIG_FILE));
  if (text.trim() === '') return fileIssue(opts.file, 0, 'the config file is empty');

  // Most configs are read quickly, without positions; what the quick read does not take (anchors,
  // tags, anything unusual or broken) is read with them, and its YAML problems reported here.
  const quick = opts.positioned === true ? undefined : quickRead(text);
  if (quick !== undefined) {
    const source = new QuickSource(opts.file, quick, () => positioned(text));
    return checkData(quick.data, new IssueList(source), opts);
  }

  const deepAt = tooDeepAt(text);
  if (deepAt !== undefined) return fileIssue(opts.file, deepAt, 'nested too deeply for a config file; refused');
  const { doc, lines } = positioned(text);
  const source = new ConfigSource(opts.file, { doc, lines });
  const issues = new IssueList(source);
  for (const e of doc.errors) yamlIssue(e, source, issues, 'error');
  for (const w of doc.warnings) yamlIssue(w, source, issues, 'warning');
  duplicateKeys(doc, source, issues);
  if (doc.errors.length > 0 || issues.errors.length > 0) return finish(issues);
  if (doc.contents === null) {
    issues.errorAt({ line: 0, col: 0 }, [], 'the config file is empty (only comments)');
    return finish(issues);
  }
  const data = toPlainData(doc, source, issues);
  if (issues.errors.length > 0) return finish(issues);
  return checkData(data, issues, opts);
}

/** yaml's document of the text, every node with its range, and where its lines begin. */
function positioned(text: string): Positioned {
  // merge: `<<: *defaults` lets wallets and rules share settings; the alias guard still applies.
  // uniqueKeys is checked by duplicateKeys(), in linear time: yaml's own check scans the map for
  // every key.
  // resolveKnownTags: no setting is binary data, a date object or a set; a `!!binary` value is
  // text the schema refuses at its place, not a Uint8Array whose bytes pass for map keys.
  const doc = yamlLib().parseDocument(text, { prettyErrors: false, uniqueKeys: false, merge: true, resolveKnownTags: false });
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
  const lines = new (yamlLib().LineCounter)();
  lines.addNewLine(0);
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines.addNewLine(i + 1);
  return lines;
}

/** JS values from the document, refusing unresolved aliases and alias bombs with a place. */
function toPlainData(doc: Document.Parsed, source: ConfigSource, issues: IssueList): unknown {
  let firstAlias: number | undefined;
  yamlLib().visit(doc, {
    Alias(_key, node, ancestors) {
      const at = node.range?.[0] ?? 0;
      firstAlias ??= at;
      const target = source.resolveAlias(node);
      if (target === undefined) {
        issues.errorAt(source.positionOfOffset(at), () => source.pathAtOffset(at), `no anchor &${shownName(node.source)} before this alias`);
      } else if (ancestors.includes(target)) {
        // `a: &a [ *a ]` or `r: &r { <<: *r }` makes the data contain itself: an endless structure
        // no check could finish walking, so it is refused here with its place.
        issues.errorAt(source.positionOfOffset(at), () => source.pathAtOffset(at), `alias *${shownName(node.source)} is inside its own anchor: a loop; write the values out`);
      }
    },
    Pair(_key, pair) {
      // `? [a, b] : c` is valid YAML, but no config key is a list or a map.
      if (pair.key !== null && !yamlLib().isScalar(pair.key) && !yamlLib().isAlias(pair.key)) {
        const at = (pair.key as { range?: [number, number, number] }).range?.[0] ?? 0;
        issues.errorAt(source.positionOfOffset(at), () => source.pathAtOffset(at), 'a key must be a plain name, not a list or a map');
      }
    },
  });
  if (issues.errors.length > 0) return undefined;
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    const at = firstAlias ?? 0;
    const why =
      err instanceof ReferenceError && /alias count/i.test(err.message)
        ? `aliases expand beyond ${MAX_ALIAS_COUNT} copies (a resource-exhaustion guard); write the values out`
        : 'cannot be read as data';
    issues.errorAt(source.positionOfOffset(at), [], why);
    return undefined;
  }
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
  yamlLib().visit(doc, {
    Map(_key, map) {
      const first = new Map<string, Position>();
      for (const pair of map.items) {
        if (!yamlLib().isScalar(pair.key)) continue;
        const value: unknown = pair.key.value;
        const name = typeof value === 'symbol' ? '<<' : String(value);
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
