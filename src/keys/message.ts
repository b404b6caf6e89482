// The one place a signed message is built from an action (SPEC §7): every backend, in process or
// behind the signer service, renders the configured template here, so a backend never signs bytes
// it was handed.
import type { SignedOp } from '../domain.js';
import { isCanonicalSol } from '../amount.js';
import { renderTemplate, templateVariables, type TemplateVariable } from '../api/endpoints.js';
import { SignerRefused, type SignAction } from './port.js';

/** The message template of each signed op (config `api.endpoints.<op>.message`). */
export type MessageTemplates = Readonly<Record<SignedOp, string>>;

/** The templates of an endpoints config. */
export function templatesOf(endpoints: Readonly<Record<SignedOp, { message: string }>>): MessageTemplates {
  const out = {} as Record<SignedOp, string>;
  for (const op of Object.keys(endpoints) as SignedOp[]) out[op] = endpoints[op].message;
  return out;
}

// A day ("2026-11-25") from a real server; the sandbox's fast demo epochs are other short labels.
const EPOCH = /^[0-9A-Za-z_.:-]{1,64}$/;

/**
 * The exact text signed for an action. Refuses (INVALID_ACTION) an action the template cannot be
 * rendered for or whose fields are not in their wire form: an amount that is not canonical SOL
 * text, a ts that is not a whole second, an op without a template.
 */
export function messageFor(templates: MessageTemplates, action: SignAction): string {
  const refuse = (why: string): never => {
    throw new SignerRefused('INVALID_ACTION', why);
  };
  const template = (templates as Partial<Record<string, string>>)[action.op];
  if (template === undefined) refuse(`no message template for op ${String(action.op)}`);
  if (!Number.isSafeInteger(action.ts) || action.ts < 0) refuse('ts must be whole non-negative Unix seconds');
  const vars: Partial<Record<TemplateVariable, string>> = { wallet: action.wallet, ts: String(action.ts), op: action.op };
  if (action.op !== 'claim') {
    if (action.symbol === undefined || action.symbol === '') refuse(`${action.op} needs a symbol`);
    if (action.amount === undefined || !isCanonicalSol(action.amount) || /^0(\.0*)?$/.test(action.amount)) {
      refuse(`${action.op} needs a positive amount in canonical SOL text`);
    }
  }
  if (action.symbol !== undefined) vars.symbol = action.symbol;
  if (action.amount !== undefined) {
    if (!isCanonicalSol(action.amount)) refuse('amount must be canonical SOL text');
    vars.amount = action.amount;
  }
  if (action.epoch !== undefined && action.epoch !== '') {
    if (!EPOCH.test(action.epoch)) refuse('epoch must be a short label (a day, YYYY-MM-DD)');
    vars.epoch = action.epoch;
  } else if (templateVariables(template as string).includes('epoch')) {
    // A message with the wrong epoch would be refused by the server, and one with a made-up
    // epoch could be accepted for the wrong one.
    refuse(`the ${action.op} message template signs {epoch}, but no epoch is known for this ${action.op}`);
  }
  try {
    return renderTemplate(template as string, vars);
  } catch (err) {
    return refuse((err as Error).message);
  }
}
