// One pass: when the schema refuses part of a file, the rest is still checked. The refused parts
// are set aside — a wallet or rule entry replaced by a stand-in at the same index (so every later
// message keeps its place), a setting dropped back to its default, a required value given a
// placeholder — and resolving, the cross-field checks and the key check run over what is left.
// Entries of `wallets` and `rules` are judged one by one, each by its own schema (renovate's
// LooseArray): a bad entry never takes another parse of the whole file to set aside.
// Checks skip whatever was set aside, so a stand-in never causes a message of its own: the operator
// reads the schema's problems, the cross-field problems and the key problems in one list.
import type { z } from 'zod';
import { formatPath } from '../json.js';
import type { Path, PathSegment } from './positions.js';
import { ConfigSchema, WalletSchema, type RawConfig, type RawWallet } from './schema.js';
import { Rule } from './schema-rules.js';

/** What was set aside; cross-checks and the key check consult it. */
export interface SetAside {
  /** Indexes of `wallets` entries that are stand-ins (refused by the schema, or a bad wallets_file line). */
  wallets: Set<number>;
  /** Indexes of `rules` entries that are stand-ins. */
  rules: Set<number>;
  /** The names set-aside rules were written with, when readable, to their index: a reference to one is not judged. */
  ruleNames: Map<string, number>;
  /** Other values replaced by their default or a placeholder, as formatted paths ("api", "schedule.poll"). */
  paths: Set<string>;
}

export function emptySetAside(): SetAside {
  return { wallets: new Set(), rules: new Set(), ruleNames: new Map(), paths: new Set() };
}

/** True when `path`, or a value it is part of, was set aside. */
export function isSetAside(setAside: SetAside, path: Path): boolean {
  const [top, index] = path;
  if (top === 'wallets' && typeof index === 'number' && setAside.wallets.has(index)) return true;
  if (top === 'rules' && typeof index === 'number' && setAside.rules.has(index)) return true;
  // Asked a few times a wallet; a config the schema took whole has no path set aside to spell out.
  if (setAside.paths.size === 0) return false;
  for (let n = path.length; n > 0; n--) if (setAside.paths.has(formatPath(path.slice(0, n)))) return true;
  return false;
}

/** Parses nowhere and signs nothing: a valid base58 address (32 zero bytes) for stand-in wallets. */
const STAND_IN_ADDRESS = '11111111111111111111111111111111';
const STAND_IN_URL = 'https://set-aside.invalid/v1';

function standInWalletInput(i: number): Record<string, unknown> {
  return { name: `set-aside-wallet-${i}`, address: STAND_IN_ADDRESS, key: { env: 'AUTOCLAIM_SET_ASIDE' }, rules: [] };
}

/** A stand-in for wallets_file line entry `i` (as the schema would have given it). */
export function standInWallet(i: number): RawWallet {
  return WalletSchema.parse(standInWalletInput(i));
}

/** Required values that cannot fall back to a default: a placeholder, and what to mark. */
const PLACEHOLDERS: Record<string, { value: () => unknown; marks: string }> = {
  api: { value: () => ({ base_url: STAND_IN_URL }), marks: 'api' },
  'api.base_url': { value: () => STAND_IN_URL, marks: 'api' },
  safety: { value: () => ({ max_sol_per_action: '1' }), marks: 'safety.max_sol_per_action' },
  'safety.max_sol_per_action': { value: () => '1', marks: 'safety.max_sol_per_action' },
  wallets: { value: () => [], marks: 'wallets' },
  rules: { value: () => [], marks: 'rules' },
};

/** Settings only: a value dropped can leave its holder without a required key, refused next time. */
const MAX_ROUNDS = 4;

/**
 * The config with every part the schema refused set aside, as the schema gives it; undefined when
 * nothing useful is left (the file is not a map, or setting aside does not settle). `data` is not
 * changed. Records what it set aside in `setAside`.
 */
export function salvageConfig(data: unknown, issues: readonly z.core.$ZodIssue[], setAside: SetAside): RawConfig | undefined {
  if (!isObject(data)) return undefined;
  const copy = structuredClone(data);
  setAsideEntries(copy, 'wallets', setAside);
  setAsideEntries(copy, 'rules', setAside);
  let pending = issues.filter((issue) => !isEntryPath(issue.path as PathSegment[]));
  for (let round = 0; round < MAX_ROUNDS; round++) {
    for (const issue of pending) {
      const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : undefined;
      if (!setAsideAt(copy, issue.path as PathSegment[], unknownKeys, setAside)) return undefined;
    }
    const parsed = ConfigSchema.safeParse(copy);
    if (parsed.success) return parsed.data;
    pending = parsed.error.issues;
  }
  return undefined;
}

/** An issue inside one entry of `wallets` or `rules` (setAsideEntries has judged it already). */
function isEntryPath(path: readonly PathSegment[]): boolean {
  const [top, index] = path;
  return (top === 'wallets' || top === 'rules') && typeof index === 'number';
}

/** Every entry of the list its own schema refuses, replaced by a stand-in at its index. */
function setAsideEntries(root: Record<string, unknown>, top: 'wallets' | 'rules', setAside: SetAside): void {
  const list = root[top];
  if (!Array.isArray(list)) return;
  const schema = top === 'wallets' ? WalletSchema : Rule;
  list.forEach((entry: unknown, index) => {
    if (!schema.safeParse(entry).success) setAsideAt(root, [top, index], undefined, setAside);
  });
}

/** Sets aside the value at `path` (or, with `unknownKeys`, those keys of the map there). */
function setAsideAt(root: Record<string, unknown>, path: readonly PathSegment[], unknownKeys: readonly string[] | undefined, setAside: SetAside): boolean {
  const [top, index] = path;
  if (top === undefined) {
    if (unknownKeys === undefined) return false; // the file is not a map of settings
    for (const k of unknownKeys) delete root[k];
    return true;
  }
  // A whole wallet or rule entry: a stand-in at its index.
  const list = root[String(top)];
  if ((top === 'wallets' || top === 'rules') && typeof index === 'number' && Array.isArray(list) && index < list.length) {
    if (top === 'wallets') {
      list[index] = standInWalletInput(index);
      setAside.wallets.add(index);
    } else {
      const name: unknown = isObject(list[index]) ? list[index]['name'] : undefined;
      if (typeof name === 'string') setAside.ruleNames.set(name, index);
      list[index] = { name: `set-aside-rule-${index}`, do: ['claim'] };
      setAside.rules.add(index);
    }
    return true;
  }
  if (unknownKeys !== undefined) {
    const holder = valueAt(root, path);
    if (isObject(holder)) {
      for (const k of unknownKeys) delete holder[k];
      return true;
    }
    // Not a map at all (a `!!binary` value is a Uint8Array, whose "keys" are its bytes): the
    // value itself is what the schema refused, and it is set aside whole below.
  }
  // The key that holds the refused value: list items (alerts.webhook.events[1]) go with their list.
  let end = path.length;
  while (end > 1 && typeof path[end - 1] === 'number') end--;
  const keyPath = path.slice(0, end);
  const placeholder = PLACEHOLDERS[formatPath(keyPath)];
  const parent = valueAt(root, keyPath.slice(0, -1));
  const key = keyPath[keyPath.length - 1];
  if (!isObject(parent) || key === undefined) return false;
  if (placeholder !== undefined) {
    parent[String(key)] = placeholder.value();
    setAside.paths.add(placeholder.marks);
    return true;
  }
  const marked = formatPath(keyPath);
  if (setAside.paths.has(marked) && !(String(key) in parent)) {
    // Dropped already and still refused: it is required where it sits, so its holder goes too.
    return keyPath.length > 1 && setAsideAt(root, keyPath.slice(0, -1), undefined, setAside);
  }
  delete parent[String(key)];
  setAside.paths.add(marked);
  return true;
}

function valueAt(root: unknown, path: readonly PathSegment[]): unknown {
  let v = root;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[String(seg)];
  }
  return v;
}

/** A map of settings as YAML gives one: a plain object, not an array, a Uint8Array (`!!binary`) or a Date. */
function isObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
