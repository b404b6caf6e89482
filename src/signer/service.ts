// What the signer does with one request line, apart from the socket: parse, check against its own
// policy and clock, commit a record to its journal, and only then sign (SPEC §7). The message is
// built here from the signer's own templates: the client names an action, never the bytes.
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { parseCanonicalSol } from '../amount.js';
import type { Clock } from '../domain.js';
import { judgeEpoch } from '../executor/epoch-check.js';
import { messageFor } from '../keys/message.js';
import type { SignAction } from '../keys/port.js';
import type { Signer } from '../keys/signer.js';
import type { Logger } from '../log/logger.js';
import type { SignerConfig, SignerKeyConfig } from './config.js';
import type { SignerFailpoint } from './failpoints.js';
import type { JournalVerdict, SignerJournal } from './journal.js';
import { errorLine, parseRequest, type SignerCode } from './protocol.js';

export interface SignerServiceDeps {
  config: SignerConfig;
  /** By key name; every key of the config. */
  signers: ReadonlyMap<string, Signer>;
  journal: SignerJournal;
  clock: Clock;
  logger: Logger;
  failpoint: SignerFailpoint;
}

/** Signatures and refusals so far, by code (what a metrics page or a test reads). */
export interface SignerCounts {
  signed: number;
  refused: Partial<Record<SignerCode, number>>;
}

function idOf(line: string): string | null {
  const parsed = parseRequest(line);
  return parsed.ok ? (parsed.request.id ?? null) : parsed.id;
}

type Outcome = { ok: true; message: string; signature: Uint8Array; repeat: boolean } | { ok: false; code: SignerCode; why: string };

export interface SignerHandler {
  /** The answer line (with its newline) for one request line (without it). */
  answer(line: string): string;
  /**
   * The answers to the lines a client had in flight, journalled in one commit (group commit):
   * every signature among them is on disk before any of them is returned.
   */
  answerAll(lines: readonly string[]): string;
  readonly counts: SignerCounts;
}

export function createSignerHandler(deps: SignerServiceDeps): SignerHandler {
  const { config, logger } = deps;
  const keys = new Map<string, SignerKeyConfig>(config.keys.map((k) => [k.name, k]));
  const publicKeys = `${JSON.stringify(config.keys.map((k) => ({ key: k.name, address: k.address })))}`;
  const counts: SignerCounts = { signed: 0, refused: {} };

  const refuse = (code: SignerCode, why: string): Outcome => ({ ok: false, code, why });

  function sign(keyName: string, action: SignAction): Outcome {
    const key = keys.get(keyName);
    const signer = deps.signers.get(keyName);
    // A wallet that is not the key's is the same refusal as an unknown key: nothing to tell apart.
    if (key === undefined || signer === undefined || key.address !== action.wallet) return refuse('UNKNOWN_KEY', `no key ${JSON.stringify(keyName)} for this wallet`);
    const nowMs = deps.clock.now();
    const skewMs = action.ts * 1000 - nowMs;
    if (Math.abs(skewMs) > config.maxTsSkewMs) return refuse('TS_SKEW', `ts is ${Math.round(skewMs / 1000)} s from this signer's clock (at most ${config.maxTsSkewMs / 1000} s)`);
    const { policy } = key;
    if (!policy.ops.has(action.op)) return refuse('POLICY_OP', `${action.op} is not allowed for key ${keyName}`);
    if (action.epoch !== undefined) {
      const verdict = judgeEpoch({ epoch: action.epoch, nowMs, last: null, exempt: config.epochs === 'any' });
      if (!verdict.ok) return refuse('EPOCH_INVALID', verdict.detail);
    }
    let lamports: bigint | undefined;
    if (action.op !== 'claim') {
      if (action.symbol === undefined || !policy.symbols.has(action.symbol)) return refuse('POLICY_SYMBOL', `symbol ${action.symbol ?? '(none)'} is not allowed for key ${keyName}`);
      lamports = parseCanonicalSol(action.amount ?? '');
      if (lamports > policy.maxLamportsPerAction) return refuse('POLICY_ACTION_CAP', `${action.amount} SOL is over this key's cap per action`);
    }
    let message: string;
    try {
      message = messageFor(config.templates, action);
    } catch {
      return refuse('BAD_REQUEST', `the ${action.op} template signs a value this request lacks`);
    }
    const bytes = new TextEncoder().encode(message);
    let verdict: JournalVerdict;
    try {
      verdict = deps.journal.record(
        {
          key: keyName,
          wallet: action.wallet,
          op: action.op,
          symbol: action.symbol,
          amountLamports: lamports,
          ts: action.ts,
          epoch: action.epoch,
          messageSha256: createHash('sha256').update(bytes).digest('hex'),
          signedAtMs: nowMs,
          plan: action.planId,
          step: action.stepId,
        },
        policy.maxLamportsPerDay,
      );
    } catch (err) {
      logger.error({ event: 'signer.journal_failed', err }, 'the signer journal could not record a signature; nothing signed');
      return refuse('INTERNAL', 'the signer could not record this signature; nothing was signed');
    }
    if (verdict === 'already_signed_epoch') return refuse('ALREADY_SIGNED_EPOCH', `a claim for epoch ${action.epoch} was already signed for this wallet`);
    if (verdict === 'day_cap') return refuse('POLICY_DAY_CAP', `${action.amount} SOL would take this wallet over its cap per day`);
    return { ok: true, message, signature: signer.sign(bytes), repeat: verdict === 'repeat' };
  }

  function answer(line: string): string {
    const parsed = parseRequest(line);
    if (!parsed.ok) {
      count('BAD_REQUEST');
      logger.warn({ event: 'signer.refused', code: 'BAD_REQUEST', why: parsed.message }, `refused a malformed request: ${parsed.message}`);
      return errorLine(parsed.id, 'BAD_REQUEST', parsed.message);
    }
    const req = parsed.request;
    if (req.kind === 'public_keys') return `{"id":${JSON.stringify(req.id ?? null)},"keys":${publicKeys}}\n`;
    const { action } = req;
    const fields = { key: req.key, wallet: action.wallet, op: action.op, symbol: action.symbol, amount: action.amount, ts: action.ts, epoch: action.epoch, plan: action.planId, step: action.stepId };
    const outcome = sign(req.key, action);
    if (!outcome.ok) {
      count(outcome.code);
      logger.warn({ event: 'signer.refused', code: outcome.code, why: outcome.why, ...fields }, `refused ${action.op}: ${outcome.code}`);
      return errorLine(req.id, outcome.code, outcome.why);
    }
    counts.signed++;
    logger.info({ event: 'signer.signed', repeat: outcome.repeat, ...fields }, `signed ${action.op} for key ${req.key}${outcome.repeat ? ' (the same message again)' : ''}`);
    return `${JSON.stringify({ id: req.id, signature: bs58.encode(outcome.signature), message: outcome.message })}\n`;
  }

  function count(code: SignerCode): void {
    counts.refused[code] = (counts.refused[code] ?? 0) + 1;
  }

  function answerAll(lines: readonly string[]): string {
    let out: string;
    try {
      out = deps.journal.batch(() => lines.map(answer).join(''));
    } catch (err) {
      // The batch did not commit: none of its signatures may leave.
      logger.error({ event: 'signer.journal_failed', err }, 'the signer journal could not commit; nothing signed');
      return lines.map((l) => errorLine(idOf(l), 'INTERNAL', 'the signer could not record this signature; nothing was signed')).join('');
    }
    deps.failpoint('after_journal_commit');
    return out;
  }

  return { answer: (line) => answerAll([line]), answerAll, counts };
}
