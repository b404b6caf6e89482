// Shared by the signer service's tests: a temp dir with real keys and a signer.yaml, and a client
// that speaks the protocol directly (as the daemon, or a compromised daemon, would).
import { createConnection, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { buildSignedBody, joinUrl } from '../../src/api/signed-request.js';
import type { SignAction } from '../../src/keys/port.js';
import { encodeSignature } from '../../src/keys/signer.js';
import { makeWallets, tempDir, type TestWallet } from '../e2e/helpers.js';

export interface SignerSetup {
  dir: string;
  socket: string;
  journal: string;
  configFile: string;
  wallets: TestWallet[];
  cleanup: () => void;
}

export interface PolicyYaml {
  ops?: string;
  symbols?: string;
  perAction?: string;
  perDay?: string;
}

export function signerYaml(s: { socket: string; wallets: TestWallet[]; policy?: PolicyYaml; extra?: string; key?: (w: TestWallet) => string; state?: string }): string {
  const p = s.policy ?? {};
  const keys = s.wallets
    .map(
      (w) => `  - name: ${w.name}
    address: ${w.address}
    key: ${s.key?.(w) ?? `{ file: ./keys/${w.name}.json }`}
    policy:
      ops: ${p.ops ?? '[claim, deposit]'}
      symbols: ${p.symbols ?? '[SOL2X]'}
      max_sol_per_action: ${p.perAction ?? '10'}
      max_sol_per_day: ${p.perDay ?? '25'}
`,
    )
    .join('');
  return `socket: ${s.socket}
state:
  ${s.state ?? 'path: ./journal.db'}
${s.extra ?? ''}keys:
${keys}`;
}

export function signerSetup(opts: { names?: string[]; policy?: PolicyYaml; extra?: string; state?: string } = {}): SignerSetup {
  const { dir, cleanup } = tempDir('autoclaim-signer-');
  const wallets = makeWallets(dir, opts.names ?? ['treasury']);
  const socket = join(dir, 'signer.sock');
  const configFile = join(dir, 'signer.yaml');
  writeFileSync(
    configFile,
    signerYaml({
      socket,
      wallets,
      ...(opts.policy ? { policy: opts.policy } : {}),
      ...(opts.extra !== undefined ? { extra: opts.extra } : {}),
      ...(opts.state !== undefined ? { state: opts.state } : {}),
    }),
  );
  return { dir, socket, journal: join(dir, 'journal.db'), configFile, wallets, cleanup };
}

/** A line-at-a-time client of the socket: send raw text, read answers in order. */
export class RawClient {
  private buffered = '';
  private readonly waiting: Array<(line: string | undefined) => void> = [];
  private readonly lines: string[] = [];
  private closed = false;

  private constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      let nl = this.buffered.indexOf('\n');
      while (nl >= 0) {
        this.deliver(this.buffered.slice(0, nl));
        this.buffered = this.buffered.slice(nl + 1);
        nl = this.buffered.indexOf('\n');
      }
    });
    const end = () => {
      this.closed = true;
      for (const w of this.waiting.splice(0)) w(undefined);
    };
    socket.on('close', end);
    socket.on('error', end);
  }

  static connect(path: string): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = createConnection(path);
      s.once('connect', () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }

  private deliver(line: string): void {
    const w = this.waiting.shift();
    if (w) w(line);
    else this.lines.push(line);
  }

  /** The next answer line; undefined when the connection closed first. */
  next(): Promise<string | undefined> {
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async ask(request: unknown): Promise<Record<string, unknown>> {
    this.socket.write(`${typeof request === 'string' ? request : JSON.stringify(request)}\n`);
    const line = await this.next();
    if (line === undefined) throw new Error('connection closed before an answer');
    return JSON.parse(line) as Record<string, unknown>;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The error code of an answer, or undefined when it carries a signature. */
export function codeOf(answer: Record<string, unknown>): string | undefined {
  return (answer.error as { code?: string } | undefined)?.code;
}

/**
 * Sends a signed claim or deposit to the sandbox (which verifies every signature) as the daemon
 * would: the body and headers of SPEC §1; its status and answer.
 */
export async function sendToSandbox(sandboxUrl: string, action: SignAction, signature: Uint8Array): Promise<{ status: number; body: Record<string, unknown> }> {
  const body = buildSignedBody(action.op, {
    wallet: action.wallet,
    signature: encodeSignature(signature, 'base58'),
    ...(action.symbol !== undefined ? { symbol: action.symbol } : {}),
    ...(action.amount !== undefined ? { amountText: action.amount } : {}),
  });
  const res = await fetch(joinUrl(sandboxUrl, DEFAULT_ENDPOINTS[action.op].path), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-ts': String(action.ts), 'x-svc-wallet': action.wallet },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
