// The signed text of an action, from message templates (api.endpoints.<op>.message in the daemon,
// templates: in signer.yaml). The daemon and every backend build it with this one function, so the
// two agree byte for byte or the answer is refused.
import { renderTemplate, type TemplateVariable } from '../api/endpoints.js';
import type { SignedOp } from '../domain.js';
import type { SignAction } from './port.js';

export type MessageTemplates = Readonly<Record<SignedOp, string>>;

export function messageFor(templates: MessageTemplates, action: SignAction): string {
  const vars: Partial<Record<TemplateVariable, string>> = { wallet: action.wallet, ts: String(action.ts), op: action.op };
  if (action.symbol !== undefined) vars.symbol = action.symbol;
  if (action.amount !== undefined) vars.amount = action.amount;
  if (action.epoch !== undefined && action.epoch !== '') vars.epoch = action.epoch;
  return renderTemplate(templates[action.op], vars);
}
