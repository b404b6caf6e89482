// What the signer does with the request lines a client had in flight, apart from the socket: parse,
// check against its own policy and clock, and — in one journal transaction — record each, have its
// key's backend sign it, and commit; only then answer (SPEC §7). The message is built here from the
// signer's own templates: the client names an action, never the bytes.
//
// Signing happens inside the transaction, before its commit, so a record exists exactly for the
// signatures that were made: a backend that fails or does not answer in time (Vault sealed, a
// token pulled, a KMS 5xx) has its record removed before the commit and the request is refused —
// nothing signed, nothing counted, and the daemon may ask again later (SIGNER_UNAVAILABLE). A
// record whose signature was made but never returned (kill -9 after the commit, a COMMIT whose
// answer was lost, a client gone) stays and counts, by every check alike: the safe side.
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { parseCanonicalSol } from '../amount.js';
import { templateVariables } from '../api/endpoints.js';
import type { Clock } from '../domain.js';
import { judgeEpoch } from '../executor/epoch-check.js';
import { askSigner } from '../executor/signing-guard.js';
import { unitsOf } from '../rules/amounts.js';
import { messageFor } from '../keys/message.js';
import type { SignAction, SignerBackend, WalletSigner } from '../keys/port.js';
import type { Logger } from '../log/logger.js';
import type { SignerConfig, SignerKeyConfig } from './config.js';
import type { SignerFailpoint } from './failpoints.js';
import type { JournalRecord, JournalTx, JournalVerdict, SignerJournal } from './journal.js';
import { errorLine, parseRequest, type SignerCode } from './protocol.js';

/**
 * How long a key's backend may take to sign one request: below the daemon's own deadline (10 s,
 * executor/signing-guard.ts), so the daemon hears SIGNER_UNAVAILABLE rather than timing out.
 */
export const BACKEND_SIGN_DEADLINE_MS = 5_000;

export interface SignerServiceDeps {
  config: SignerConfig;
  /** By key name; every key of the config, through the signer port (keys/backends). */
  signers: ReadonlyMap<string, WalletSigner>;
  journal: SignerJournal;
  clock: Clock;
  logger: Logger;
  failpoint: SignerFailpoint;
  /** BACKEND_SIGN_DEADLINE_MS unless given (tests). */
  signDeadlineMs?: number;
}

/** Signatures and refusals so far, by code (what a metrics page or a test reads). */
export interface SignerCounts {
  signed: number;
  refused: Partial<Record<SignerCode, number>>;
}

export interface SignerHandler {
  /** The answer line (with its newline) for one request line (without it). */
  answer(line: string): Promise<string>;
  /**
   * The answers to the lines a client had in flight, journalled in one commit (group commit):
   * every signature among them is committed before any of them is returned.
   */
  answerAll(lines: readonly string[]): Promise<string>;
  readonly counts: SignerCounts;
}

type Refusal = { ok: false; code: SignerCode; why: string };
type Signed = { ok: true; message: string; signature: Uint8Array; repeat: boolean };
type Outcome = Signed | Refusal;

/** A request that passed every check but the journal's: to be recorded and signed. */
interface Pending {
  at: number;
  id: string;
  key: SignerKeyConfig;
  signer: WalletSigner;
  action: SignAction;
  message: string;
  rec: JournalRecord;
}

/** Backends whose key is in this process's memory: they sign at once, and need no deadline. */
const IN_PROCESS: ReadonlySet<SignerBackend> = new Set(['file', 'env', 'credential']);
const NEVER = new AbortController().signal;

const refuse = (code: SignerCode, why: string): Refusal => ({ ok: false, code, why });
const NOT_RECORDED = 'the signer could not commit its journal; nothing was handed out';

export function createSignerHandler(deps: SignerServiceDeps): SignerHandler {
  const { config, logger } = deps;
  const keys = new Map<string, SignerKeyConfig>(config.keys.map((k) => [k.name, k]));
  const publicKeys = `${JSON.stringify(config.keys.map((k) => ({ key: k.name, address: k.address })))}`;
  const counts: SignerCounts = { signed: 0, refused: {} };
  const deadlineMs = deps.signDeadlineMs ?? BACKEND_SIGN_DEADLINE_MS;

  /** The checks that need no journal: a refusal, or what to record and sign. */
  function check(at: number, id: string, keyName: string, action: SignAction): Refusal | Pending {
    const key = keys.get(keyName);
    const signer = deps.signers.get(keyName);
    // A wallet that is not the key's is the same refusal as an unknown key: nothing to tell apart.
    if (key === undefined || signer === undefined || key.address !== action.wallet) return refuse('UNKNOWN_KEY', `no key ${JSON.stringify(keyName)} for this wallet`);
    const nowMs = deps.clock.now();
    const skewMs = action.ts * 1000 - nowMs;
    if (Math.abs(skewMs) > config.maxTsSkewMs) return refuse('TS_SKEW', `ts is ${Math.round(skewMs / 1000)} s from this signer's clock (at most ${config.maxTsSkewMs / 1000} s)`);
    const { policy } = key;
    if (!policy.ops.has(action.op)) return refuse('POLICY_OP', `${action.op} is not allowed for key ${keyName}`);
    // Judged where it means something: a claim's keys its one claim per epoch, and a template that
    // signs it puts it in the bytes. Anything else's is the journal's note of its plan's epoch,
    // days old for a step held until an operator resolved an unknown one; refused, that deposit,
    // mint, withdraw or burn was recorded rejected, where an in-process key sent it (helper h29e).
    if (action.epoch !== undefined && (action.op === 'claim' || templateVariables(config.templates[action.op]).includes('epoch'))) {
      const verdict = judgeEpoch({ epoch: action.epoch, nowMs, last: null, exempt: config.epochs === 'any' });
      if (!verdict.ok) return refuse('EPOCH_INVALID', verdict.detail);
    }
    let lamports: bigint | undefined;
    if (action.op !== 'claim') {
      if (action.symbol === undefined || !policy.symbols.has(action.symbol)) return refuse('POLICY_SYMBOL', `symbol ${action.symbol ?? '(none)'} is not allowed for key ${keyName}`);
      lamports = parseCanonicalSol(action.amount ?? '');
      if (lamports > policy.maxLamportsPerAction) return refuse('POLICY_ACTION_CAP', `${action.amount} ${unitsOf({ kind: action.op, symbol: action.symbol })} is over this key's cap per action`);
    }
    let message: string;
    try {
      message = messageFor(config.templates, action);
    } catch {
      return refuse('BAD_REQUEST', `the ${action.op} template signs a value this request lacks`);
    }
    const rec: JournalRecord = {
      key: keyName,
      wallet: action.wallet,
      op: action.op,
      symbol: action.symbol,
      amountLamports: lamports,
      ts: action.ts,
      epoch: action.epoch,
      messageSha256: createHash('sha256').update(message).digest('hex'),
      signedAtMs: nowMs,
      plan: action.planId,
      step: action.stepId,
    };
    return { at, id, key, signer, action, message, rec };
  }

  /** The key's backend signs, under a deadline; its answer checked (the message ours, the signature the key's). */
  async function signOne(p: Pending, repeat: boolean): Promise<Outcome> {
    if (IN_PROCESS.has(p.signer.backend)) {
      // A key in this process's memory signs the message it was given with the address's key
      // (checked at load): verifying its own signature again would double the CPU of a signature
      // for nothing (the daemon verifies every answer anyway). Any other backend is checked.
      try {
        return { ok: true, message: p.message, signature: (await p.signer.sign(p.action, NEVER)).signature, repeat };
      } catch (err) {
        logger.error({ event: 'signer.backend_failed', key: p.key.name, backend: p.signer.backend, err }, `key ${p.key.name} did not sign`);
        return refuse('INTERNAL', `key ${p.key.name} failed to sign; nothing was signed`);
      }
    }
    const v = await askSigner(p.signer, p.action, p.message, deadlineMs, deps.clock);
    if (v.ok) return { ok: true, message: p.message, signature: v.signature, repeat };
    logger.error({ event: 'signer.backend_failed', key: p.key.name, backend: p.signer.backend, code: v.code, why: v.detail }, `the ${p.signer.backend} backend of key ${p.key.name} did not sign: ${v.code}`);
    // Unanswered (a deadline, an unreachable backend): the daemon may ask again later. Anything
    // else (a wrong signature, a PKCS#11 error) is this signer's fault, not the request's.
    return v.unanswered ? refuse('SIGNER_UNAVAILABLE', `key ${p.key.name}'s ${p.signer.backend} backend did not sign (${v.code}); nothing was signed`) : refuse('INTERNAL', `key ${p.key.name}'s ${p.signer.backend} backend failed (${v.code}); nothing was signed`);
  }

  /** Inside the batch's transaction: record each in order (each checked against those before it), sign, undo the records whose signature was not made. */
  async function journalled(tx: JournalTx, pending: readonly Pending[]): Promise<Outcome[]> {
    const verdicts: JournalVerdict[] = [];
    for (const p of pending) verdicts.push(await tx.record(p.rec, p.key.policy.maxLamportsPerDay));
    const outcomes = await Promise.all(
      pending.map(async (p, i): Promise<Outcome> => {
        const v = verdicts[i];
        if (v === 'already_signed_epoch') return refuse('ALREADY_SIGNED_EPOCH', `a claim for epoch ${p.action.epoch} was already signed for this wallet`);
        if (v === 'day_cap') return refuse('POLICY_DAY_CAP', `${p.action.amount} ${unitsOf({ kind: p.action.op, symbol: p.action.symbol })} would take this wallet over its cap per day`);
        return signOne(p, v === 'repeat');
      }),
    );
    // A record made in this batch whose signature could not be made goes: nothing of it leaves.
    // Every answer of this batch for that message goes with it (a repeat in the same batch would
    // otherwise hand out a signature whose record was just removed).
    const removed = new Set<string>();
    for (const [i, p] of pending.entries()) {
      if (verdicts[i] !== 'recorded' || outcomes[i]?.ok !== false) continue;
      await tx.forget(p.rec);
      removed.add(`${p.rec.wallet} ${p.rec.messageSha256}`);
    }
    return outcomes.map((o, i) => {
      const p = pending[i]!;
      if (o.ok && removed.has(`${p.rec.wallet} ${p.rec.messageSha256}`)) return refuse('SIGNER_UNAVAILABLE', 'the same request, in flight beside this one, could not be signed; nothing was signed');
      return o;
    });
  }

  async function answerAll(lines: readonly string[]): Promise<string> {
    const out: string[] = new Array<string>(lines.length);
    const pending: Pending[] = [];
    lines.forEach((line, at) => {
      const parsed = parseRequest(line);
      if (!parsed.ok) {
        out[at] = refused(parsed.id, refuse('BAD_REQUEST', parsed.message), {});
        return;
      }
      const req = parsed.request;
      if (req.kind === 'public_keys') {
        out[at] = `{"id":${JSON.stringify(req.id ?? null)},"keys":${publicKeys}}\n`;
        return;
      }
      const checked = check(at, req.id, req.key, req.action);
      if ('code' in checked) out[at] = refused(req.id, checked, fieldsOf(req.key, req.action));
      else pending.push(checked);
    });
    if (pending.length === 0) return out.join('');
    let outcomes: Outcome[];
    try {
      outcomes = await deps.journal.batch(
        pending.map((p) => p.action.wallet),
        (tx) => journalled(tx, pending),
      );
      deps.failpoint('after_journal_commit');
    } catch (err) {
      // The batch did not commit, or may not have: none of its signatures may leave. Nor was any
      // request judged: unavailable, not a refusal, so the daemon signs the step afresh once the
      // journal commits again (what a lost COMMIT did record counts, as after a kill -9).
      logger.error({ event: 'signer.journal_failed', err }, 'the signer journal could not commit; nothing handed out');
      outcomes = pending.map(() => refuse('SIGNER_UNAVAILABLE', NOT_RECORDED));
    }
    pending.forEach((p, i) => {
      const o = outcomes[i]!;
      const fields = fieldsOf(p.key.name, p.action);
      if (!o.ok) {
        out[p.at] = refused(p.id, o, fields);
        return;
      }
      counts.signed++;
      logger.info({ event: 'signer.signed', repeat: o.repeat, backend: p.signer.backend, ...fields }, `signed ${p.action.op} for key ${p.key.name}${o.repeat ? ' (the same message again)' : ''}`);
      out[p.at] = `${JSON.stringify({ id: p.id, signature: bs58.encode(o.signature), message: o.message })}\n`;
    });
    return out.join('');
  }

  function refused(id: string | null, r: Refusal, fields: Record<string, unknown>): string {
    counts.refused[r.code] = (counts.refused[r.code] ?? 0) + 1;
    logger.warn({ event: 'signer.refused', code: r.code, why: r.why, ...fields }, `refused ${typeof fields.op === 'string' ? fields.op : 'a malformed request'}: ${r.code}`);
    return errorLine(id, r.code, r.why);
  }

  return { answer: (line) => answerAll([line]), answerAll, counts };
}

function fieldsOf(key: string, action: SignAction): Record<string, unknown> {
  return { key, wallet: action.wallet, op: action.op, symbol: action.symbol, amount: action.amount, ts: action.ts, epoch: action.epoch, plan: action.planId, step: action.stepId };
}
