import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type LoadResult } from '../../src/config/index.js';
import type { AppConfig } from '../../src/domain.js';
import { formatIssue } from '../../src/errors.js';

/** A small valid config; the line numbers in the broken-config table refer to this text. */
export const BASE = `api:
  base_url: http://127.0.0.1:8787/v1
wallets:
  - name: treasury
    address: FNjvMVGZGVfeDfdTXCuu6bWZe61a4Dqo4CwgmZyWnSDf
    key: { file: ./keys/treasury.json }
rules:
  - name: compound
    when:
      pending_sol: { gte: 0.5 }
    do:
      - claim
      - deposit: { symbol: SOL2X, amount: "50%" }
safety:
  max_sol_per_action: 100
`;

/** `text` with `from` replaced by `to`; `from` must occur exactly once, so a typo fails loudly. */
export function edit(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + 1) >= 0) throw new Error(`"${from}" must occur exactly once`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

export class TempDir {
  readonly path = mkdtempSync(join(tmpdir(), 'autoclaim-config-'));

  write(name: string, content: string | Buffer, mode = 0o600): string {
    const p = join(this.path, name);
    writeFileSync(p, content, { mode });
    return p;
  }

  /** Loads `name` from this directory (as a relative path, so messages read `name:line:col`). */
  load(name: string, env: NodeJS.ProcessEnv = {}): LoadResult {
    return loadConfig(name, { env, cwd: this.path });
  }

  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

export function formatted(r: LoadResult): { errors: string[]; warnings: string[] } {
  return { errors: r.errors.map(formatIssue), warnings: r.warnings.map(formatIssue) };
}

/** Two configs written in `dir`: one naming api_key_file (`api_key` beside it), one not. */
export function apiKeyConfigs(dir: TempDir): { withFile: AppConfig; noFile: AppConfig } {
  dir.write('with-file.yaml', edit(BASE, 'v1\n', 'v1\n  api_key_file: api_key\n'));
  dir.write('no-file.yaml', BASE);
  return { withFile: dir.load('with-file.yaml').config as AppConfig, noFile: dir.load('no-file.yaml').config as AppConfig };
}
