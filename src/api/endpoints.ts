// Method, path and signed message of each signed operation. The defaults follow the real
// service's public documentation; SPEC §1 makes every part configurable.
import type { SignedEndpoint, SignedOp } from '../domain.js';

/** A 2xx answer's `status` that means the server applied the request (SPEC §2), compared case-insensitively. */
export const DEFAULT_APPLIED_STATUSES: readonly string[] = Object.freeze(['success', 'submitted', 'claimed', 'ok']);
/** A 2xx answer's `status` that means it refused the request; any status in neither set is unknown. */
export const DEFAULT_REFUSED_STATUSES: readonly string[] = Object.freeze(['failed', 'rejected', 'error']);

const answers = { applied: DEFAULT_APPLIED_STATUSES, refused: DEFAULT_REFUSED_STATUSES };

export const DEFAULT_ENDPOINTS: Readonly<Record<SignedOp, SignedEndpoint>> = Object.freeze({
  claim: { method: 'POST', path: '/rewards/claim', message: '{wallet}|{ts}', ...answers },
  deposit: { method: 'POST', path: '/actions/deposit', message: '{wallet}|{symbol}|{amount}|{ts}', ...answers },
  mint: { method: 'POST', path: '/actions/mint', message: '{wallet}|{symbol}|{amount}|{ts}', ...answers },
  withdraw: { method: 'POST', path: '/actions/withdraw', message: '{wallet}|{symbol}|{amount}|{ts}', ...answers },
  burn: { method: 'POST', path: '/actions/burn', message: '{wallet}|{symbol}|{amount}|{ts}', ...answers },
});

export const DEFAULT_HEADER_PREFIX = 'x-svc';

/**
 * What a message template may name. `{epoch}` is the plan's epoch ("YYYY-MM-DD", as the summary
 * says) and `{op}` the operation's name ("claim", "deposit", ...): neither is in the documented
 * messages, but the claim's message is unpublished, so the operator may need them.
 */
export const TEMPLATE_VARIABLES = ['wallet', 'ts', 'epoch', 'symbol', 'amount', 'op'] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

/** The placeholders a template uses; unknown names are returned so config checks can refuse them. */
export function templateVariables(template: string): string[] {
  return [...template.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1] ?? '');
}

/**
 * Placeholders with no text between them (`{symbol}{amount}`), as `{symbol}{amount}`: their values
 * run together, so one message reads as more than one action (ETH2 and 5 and ETH and 25 are both
 * "ETH25"), and a signature for one is a signature for the other.
 */
export function runTogether(template: string): string[] {
  return [...template.matchAll(/\{([^{}]*)\}(?=\{([^{}]*)\})/g)].map((m) => `{${m[1] ?? ''}}{${m[2] ?? ''}}`);
}

/**
 * Renders a message template. Every placeholder must be provided: a message with a literal
 * "{symbol}" left in it would be signed and sent, and fail on the server in a confusing way.
 */
export function renderTemplate(template: string, vars: Partial<Record<TemplateVariable, string>>): string {
  return template.replace(/\{([^{}]*)\}/g, (_m, name: string) => {
    const v = (vars as Record<string, string | undefined>)[name];
    if (v === undefined) throw new Error(`message template uses {${name}} but no value is available for it`);
    return v;
  });
}
