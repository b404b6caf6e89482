// One-shot faults queued by tests and benchmarks: the ugly cases of SPEC §2 on demand (an answer
// lost after the server applied it, a reset before it did, a body that lies about its length...).
import { z } from 'zod';

const FAULT_OPS = ['claim', 'deposit', 'mint', 'withdraw', 'burn', 'summary', 'leaderboard', 'health'] as const;
export type FaultOp = (typeof FAULT_OPS)[number];

const ms = z.number().int().min(0).max(600_000);
const base = z.strictObject({
  match: z.strictObject({ op: z.enum(FAULT_OPS).optional(), wallet: z.string().min(1).optional() }).optional(),
  /** How many matching requests this fault hits; default 1. */
  times: z.number().int().min(1).max(1_000_000).optional(),
});

export const faultSpecSchema = z.discriminatedUnion('kind', [
  /** Wait, then answer normally. */
  base.extend({ kind: z.literal('latency'), ms }),
  /** Answer 500/503 (default 503) without applying. */
  base.extend({ kind: z.literal('status5xx_before'), status: z.number().int().min(500).max(599).optional() }),
  /** Answer 429, with Retry-After when retryAfterSec is given. */
  base.extend({ kind: z.literal('rate_limit'), retryAfterSec: z.number().int().min(0).max(86_400).optional() }),
  /** Destroy the socket without applying. */
  base.extend({ kind: z.literal('reset_before') }),
  /** Apply, then destroy the socket without answering. */
  base.extend({ kind: z.literal('apply_then_drop') }),
  /** Apply, then answer 500 (or `status`). */
  base.extend({ kind: z.literal('apply_then_5xx'), status: z.number().int().min(500).max(599).optional() }),
  /** Apply, then never answer: the socket stays open until the client gives up or the sandbox closes. */
  base.extend({ kind: z.literal('apply_then_hang') }),
  /** Answer `status` (default 200) with this raw body; a valid signed request is applied unless apply is false. */
  base.extend({ kind: z.literal('malformed'), body: z.string(), status: z.number().int().min(200).max(299).optional(), apply: z.boolean().optional() }),
  /** Send the headers, then the body after `ms`. */
  base.extend({ kind: z.literal('slow_body'), ms }),
  /** Announce a Content-Length larger than what is written, then close the connection. */
  base.extend({ kind: z.literal('truncated_body') }),
]);

export type FaultSpec = z.infer<typeof faultSpecSchema>;
export type FaultKind = FaultSpec['kind'];

interface QueuedFault {
  id: number;
  spec: FaultSpec;
  remaining: number;
}

/** First matching fault wins, in the order they were queued. */
export class FaultQueue {
  private queue: QueuedFault[] = [];
  private nextId = 1;
  private firedCount = 0;

  /** Validates (throws a ZodError on a bad spec) and queues; returns the fault's id. */
  add(spec: FaultSpec): number {
    const parsed = faultSpecSchema.parse(spec);
    const id = this.nextId++;
    this.queue.push({ id, spec: parsed, remaining: parsed.times ?? 1 });
    return id;
  }

  clear(): number {
    const n = this.queue.length;
    this.queue = [];
    return n;
  }

  list(): QueuedFault[] {
    return this.queue.map((f) => ({ ...f }));
  }

  get fired(): number {
    return this.firedCount;
  }

  /** Consumes one use of the first fault matching this request, if any. */
  take(op: FaultOp, wallet: string | undefined): FaultSpec | undefined {
    const i = this.queue.findIndex(
      (f) => (f.spec.match?.op === undefined || f.spec.match.op === op) && (f.spec.match?.wallet === undefined || f.spec.match.wallet === wallet),
    );
    const f = this.queue[i];
    if (!f) return undefined;
    f.remaining -= 1;
    if (f.remaining <= 0) this.queue.splice(i, 1);
    this.firedCount += 1;
    return f.spec;
  }
}
