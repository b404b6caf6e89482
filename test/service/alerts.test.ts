import { describe, expect, it } from 'vitest';
import {
  createAlertTracker,
  evaluateAlerts,
  forgetWalletsNotHere,
  reportAlerts,
  type AlertInputs,
} from '../../src/service/alerts.js';
import type { WebhookEvent, WebhookNotifier } from '../../src/service/webhook.js';
import { captureLog } from '../support/log.js';

const MIN = 60_000;

const base = (over: Partial<AlertInputs>): AlertInputs => ({
  now: 0,
  intervalMs: MIN,
  staleAfterIntervals: 3,
  unknownStepAfterMs: 15 * MIN,
  wallets: [],
  unknownSteps: [],
  ...over,
});

describe('createAlertTracker', () => {
  it('reports one opening and one closing per episode', () => {
    const t = createAlertTracker();
    const seq = [false, true, true, true, false, false, true].map((bad, i) => t.observe('k', bad, i));
    expect(seq).toEqual([undefined, 'opened', undefined, undefined, 'closed', undefined, 'opened']);
    expect(t.open()).toEqual([{ key: 'k', since: 6 }]);
    expect(t.isOpen('k')).toBe(true);
  });

  it('keeps keys apart', () => {
    const t = createAlertTracker();
    expect(t.observe('a', true, 0)).toBe('opened');
    expect(t.observe('b', true, 0)).toBe('opened');
    expect(t.observe('a', false, 1)).toBe('closed');
    expect(t.isOpen('b')).toBe(true);
  });
});

describe('evaluateAlerts: epoch_refused (SPEC §2)', () => {
  const inputs = (now: number, refused: Array<{ name: string; detail: string }>): AlertInputs => ({
    now,
    intervalMs: MIN,
    staleAfterIntervals: 3,
    unknownStepAfterMs: 15 * MIN,
    wallets: [],
    unknownSteps: [],
    epochRefused: refused,
  });
  it("opens while a wallet's epochs are refused, once, and closes when it is no longer listed (a good poll)", () => {
    const t = createAlertTracker();
    const refused = [{ name: 'W1', detail: 'epoch 2099-01-01 is 26700 days ahead' }];
    expect(evaluateAlerts(t, inputs(0, refused))).toEqual([
      { key: 'epoch_refused:W1', kind: 'epoch_refused', change: 'opened', wallet: 'W1', text: "wallet W1: the API's epoch is not believed, so nothing is decided for it: epoch 2099-01-01 is 26700 days ahead" },
    ]);
    expect(evaluateAlerts(t, inputs(MIN, refused))).toEqual([]);
    expect(evaluateAlerts(t, inputs(2 * MIN, []))).toEqual([
      { key: 'epoch_refused:W1', kind: 'epoch_refused', change: 'closed', wallet: 'W1', text: 'wallet W1: its epoch is believed again' },
    ]);
  });
  it('is logged at error when it opens and handed to the webhook', () => {
    const t = createAlertTracker();
    const log = captureLog();
    const sent: WebhookEvent[] = [];
    const webhook: WebhookNotifier = { notify: (e) => void sent.push(e), close: () => Promise.resolve() };
    reportAlerts(evaluateAlerts(t, inputs(0, [{ name: 'W1', detail: 'why' }])), { logger: log.logger, webhook });
    expect(log.events('alert.opened')).toMatchObject([{ level: 'error', alert: 'epoch_refused', wallet: 'W1' }]);
    expect(sent).toMatchObject([{ key: 'epoch_refused:W1:opened', details: { alert: 'epoch_refused', wallet: 'W1' } }]);
  });
});

describe('evaluateAlerts', () => {

  it('opens a stale-wallet episode after N intervals without a successful poll, once, and closes it on the next success', () => {
    const t = createAlertTracker();
    const at = (now: number, lastOkAt: number) =>
      evaluateAlerts(t, base({ now, wallets: [{ name: 'treasury', lastOkAt, since: 0 }] })).map((a) => [a.kind, a.change]);
    expect(at(3 * MIN, 0)).toEqual([]); // exactly N intervals: not yet
    expect(at(3 * MIN + 1, 0)).toEqual([['wallet_stale', 'opened']]);
    expect(at(10 * MIN, 0)).toEqual([]);
    expect(at(60 * MIN, 0)).toEqual([]);
    expect(at(61 * MIN, 61 * MIN)).toEqual([['wallet_stale', 'closed']]);
    expect(at(62 * MIN, 61 * MIN)).toEqual([]);
  });

  it('opens a state_unreachable episode while the state database is unreachable, once, and closes it when it answers', () => {
    const t = createAlertTracker();
    const at = (now: number, down?: { since: number; error: string }) => evaluateAlerts(t, base({ now, stateUnreachable: down }));
    expect(at(0)).toEqual([]);
    const down = { since: 0, error: 'Connection terminated unexpectedly' };
    expect(at(2 * MIN, down)).toMatchObject([
      { kind: 'state_unreachable', change: 'opened', text: expect.stringMatching(/^the state database has been unreachable for 2m \(Connection terminated unexpectedly\); nothing is signed or sent/) as string },
    ]);
    expect(at(3 * MIN, down)).toEqual([]);
    expect(at(4 * MIN)).toMatchObject([{ kind: 'state_unreachable', change: 'closed' }]);
  });

  it('measures a wallet that never polled from when it was first watched', () => {
    const t = createAlertTracker();
    const r = evaluateAlerts(t, base({ now: 20 * MIN, wallets: [{ name: 'hot', lastOkAt: undefined, since: 10 * MIN }] }));
    expect(r).toMatchObject([{ kind: 'wallet_stale', change: 'opened', wallet: 'hot', text: 'wallet hot: no successful poll for 10m (more than 3 × 1m, its time between polls)' }]);
  });

  it('opens an unknown-step episode past the threshold and closes it when the step is resolved', () => {
    const t = createAlertTracker();
    const step = { id: 7, plan: 3, wallet: 'treasury', kind: 'deposit', since: 0 };
    expect(evaluateAlerts(t, base({ now: 15 * MIN, unknownSteps: [step] }))).toEqual([]);
    const opened = evaluateAlerts(t, base({ now: 15 * MIN + 1, unknownSteps: [step] }));
    expect(opened).toMatchObject([{ kind: 'unknown_step', change: 'opened', wallet: 'treasury', step: 7, plan: 3 }]);
    expect(opened[0]?.text).toContain('autoclaim actions resolve 7 --applied|--not-applied');
    expect(evaluateAlerts(t, base({ now: 30 * MIN, unknownSteps: [step] }))).toEqual([]);
    expect(evaluateAlerts(t, base({ now: 31 * MIN, unknownSteps: [] }))).toMatchObject([
      { key: 'unknown_step:7', kind: 'unknown_step', change: 'closed', step: 7 },
    ]);
    expect(t.open()).toEqual([]);
  });

  it('opens a claim_undetermined episode at once for a claim held for an operator, and closes it when resolved', () => {
    const t = createAlertTracker();
    const step = { id: 9, plan: 4, wallet: 'treasury', kind: 'claim', since: 0, held: true };
    const opened = evaluateAlerts(t, base({ now: 1, unknownSteps: [step] }));
    expect(opened).toMatchObject([{ key: 'claim_undetermined:9', kind: 'claim_undetermined', change: 'opened', wallet: 'treasury', step: 9, plan: 4 }]);
    expect(opened[0]?.text).toContain('autoclaim actions resolve 9 --applied|--not-applied');
    // Once per episode, and no second unknown_step episode for the same step past the threshold.
    expect(evaluateAlerts(t, base({ now: 30 * MIN, unknownSteps: [step] }))).toEqual([]);
    expect(evaluateAlerts(t, base({ now: 31 * MIN, unknownSteps: [] }))).toMatchObject([{ key: 'claim_undetermined:9', kind: 'claim_undetermined', change: 'closed', step: 9 }]);
  });

  it('closes the episode of a wallet taken out of the config', () => {
    const t = createAlertTracker();
    evaluateAlerts(t, base({ now: 10 * MIN, wallets: [{ name: 'old', lastOkAt: undefined, since: 0 }] }));
    expect(evaluateAlerts(t, base({ now: 11 * MIN, wallets: [] }))).toMatchObject([{ kind: 'wallet_stale', change: 'closed', wallet: 'old' }]);
  });
});

describe('reportAlerts', () => {
  it('logs an opening at error and a closing at info, and passes both to the webhook', () => {
    const log = captureLog();
    const sent: WebhookEvent[] = [];
    const webhook: WebhookNotifier = { notify: (e) => void sent.push(e), close: () => Promise.resolve() };
    const t = createAlertTracker();
    const inputs = (now: number, lastOkAt: number): AlertInputs => ({
      now,
      intervalMs: MIN,
      staleAfterIntervals: 3,
      unknownStepAfterMs: MIN,
      wallets: [{ name: 'treasury', lastOkAt, since: 0 }],
      unknownSteps: [],
    });
    reportAlerts(evaluateAlerts(t, inputs(5 * MIN, 0)), { logger: log.logger, webhook });
    reportAlerts(evaluateAlerts(t, inputs(6 * MIN, 0)), { logger: log.logger, webhook });
    reportAlerts(evaluateAlerts(t, inputs(7 * MIN, 7 * MIN)), { logger: log.logger, webhook });

    expect(log.lines.map((l) => [l['level'], l['event'], l['alert'], l['wallet']])).toEqual([
      ['error', 'alert.opened', 'wallet_stale', 'treasury'],
      ['info', 'alert.closed', 'wallet_stale', 'treasury'],
    ]);
    expect(sent.map((e) => [e.event, e.key])).toEqual([
      ['alert.opened', 'wallet_stale:treasury:opened'],
      ['alert.closed', 'wallet_stale:treasury:closed'],
    ]);
  });

  it("an unknown step's notice names its op, symbol and amount, for the channels' fields (issue 27)", () => {
    const sent: WebhookEvent[] = [];
    const webhook: WebhookNotifier = { notify: (e) => void sent.push(e), close: () => Promise.resolve() };
    const step = { id: 7, plan: 3, wallet: 'treasury', kind: 'deposit', since: 0, symbol: 'SOL2X', amountLamports: 1_500_000_000n };
    const inputs: AlertInputs = { now: 20 * MIN, intervalMs: MIN, staleAfterIntervals: 3, unknownStepAfterMs: 15 * MIN, wallets: [], unknownSteps: [step] };
    reportAlerts(evaluateAlerts(createAlertTracker(), inputs), { logger: captureLog().logger, webhook });
    expect(sent[0]?.details).toMatchObject({ alert: 'unknown_step', wallet: 'treasury', op: 'deposit', symbol: 'SOL2X', amount_sol: '1.5', step: 7, plan: 3 });
  });

  it("an unknown burn's notice gives its tokens as amount_units with their unit, never as amount_sol (helper 34)", () => {
    const sent: WebhookEvent[] = [];
    const webhook: WebhookNotifier = { notify: (e) => void sent.push(e), close: () => Promise.resolve() };
    const step = { id: 8, plan: 4, wallet: 'treasury', kind: 'burn', since: 0, symbol: 'SOL5X', amountLamports: 4_000_000_000n };
    const inputs: AlertInputs = { now: 20 * MIN, intervalMs: MIN, staleAfterIntervals: 3, unknownStepAfterMs: 15 * MIN, wallets: [], unknownSteps: [step] };
    reportAlerts(evaluateAlerts(createAlertTracker(), inputs), { logger: captureLog().logger, webhook });
    expect(sent[0]?.details).toMatchObject({ op: 'burn', symbol: 'SOL5X', amount_units: '4', unit: 'SOL5X tokens' });
    expect(sent[0]?.details).not.toHaveProperty('amount_sol');
  });
});

describe('evaluateAlerts: claims held in doubt and the cluster conditions (issue 25)', () => {
  const inputs = (over: Partial<AlertInputs>): AlertInputs => ({
    now: 0,
    intervalMs: MIN,
    staleAfterIntervals: 3,
    unknownStepAfterMs: 15 * MIN,
    wallets: [],
    unknownSteps: [],
    ...over,
  });

  it('a wallet whose claims are held in doubt past unknown_step_after opens claim_in_doubt once, and closes it when it clears', () => {
    const t = createAlertTracker();
    const doubt = [{ wallet: 'w1', since: 0 }];
    expect(evaluateAlerts(t, inputs({ now: 10 * MIN, claimsInDoubt: doubt }))).toEqual([]);
    const opened = evaluateAlerts(t, inputs({ now: 16 * MIN, claimsInDoubt: doubt }));
    expect(opened).toMatchObject([{ kind: 'claim_in_doubt', change: 'opened', wallet: 'w1' }]);
    expect(opened[0]?.text).toContain('held back for 16m');
    expect(evaluateAlerts(t, inputs({ now: 17 * MIN, claimsInDoubt: doubt }))).toEqual([]);
    expect(evaluateAlerts(t, inputs({ now: 18 * MIN, claimsInDoubt: [] }))).toMatchObject([{ kind: 'claim_in_doubt', change: 'closed', wallet: 'w1' }]);
  });

  it('clock_skew and config_differs open while their condition holds and close when it is over', () => {
    const t = createAlertTracker();
    const cluster = (clock: boolean, config: boolean) => [
      { kind: 'clock_skew' as const, bad: clock, text: 'clock skew: 90s ahead' },
      { kind: 'config_differs' as const, bad: config, text: 'config differs from b' },
    ];
    expect(evaluateAlerts(t, inputs({ cluster: cluster(false, false) }))).toEqual([]);
    expect(evaluateAlerts(t, inputs({ cluster: cluster(true, true) }))).toMatchObject([
      { kind: 'clock_skew', change: 'opened', text: 'clock skew: 90s ahead' },
      { kind: 'config_differs', change: 'opened', text: 'config differs from b' },
    ]);
    expect(evaluateAlerts(t, inputs({ cluster: cluster(true, true) }))).toEqual([]);
    expect(evaluateAlerts(t, inputs({ cluster: cluster(false, true) }))).toMatchObject([{ kind: 'clock_skew', change: 'closed' }]);
  });
});

describe('evaluateAlerts: claims_stalled (issue 27) and the open alerts by kind', () => {
  const H = 60 * MIN;

  it('opens when pending has grown with nothing claimed past alerts.unclaimed_after, and closes at the next claim', () => {
    const t = createAlertTracker();
    const at = (now: number, watch: AlertInputs['claimWatch']) =>
      evaluateAlerts(t, base({ now, unclaimedAfterMs: 24 * H, claimWatch: watch })).map((a) => [a.kind, a.change, a.wallet]);
    expect(at(24 * H, [{ wallet: 'w1', since: 0, grew: true }])).toEqual([]); // exactly the bound: not yet
    expect(at(24 * H + 1, [{ wallet: 'w1', since: 0, grew: false }])).toEqual([]); // nothing accrued: nothing to claim
    expect(at(25 * H, [{ wallet: 'w1', since: 0, grew: true }])).toEqual([['claims_stalled', 'opened', 'w1']]);
    expect(at(26 * H, [{ wallet: 'w1', since: 0, grew: true }])).toEqual([]);
    expect(t.openKinds()).toEqual(new Map([['claims_stalled', 1]]));
    // A claim applied: the supervisor starts the watch afresh.
    expect(at(27 * H, [{ wallet: 'w1', since: 27 * H, grew: false }])).toEqual([['claims_stalled', 'closed', 'w1']]);
    expect(t.openKinds()).toEqual(new Map());
  });

  it('is off without alerts.unclaimed_after', () => {
    const t = createAlertTracker();
    expect(evaluateAlerts(t, base({ now: 1000 * H, claimWatch: [{ wallet: 'w1', since: 0, grew: true }] }))).toEqual([]);
  });

  it('counts the open episodes of each kind, as autoclaim_alerts_open exports them', () => {
    const t = createAlertTracker();
    evaluateAlerts(t, base({ now: 10 * MIN, wallets: [{ name: 'a', lastOkAt: 0, since: 0 }, { name: 'b', lastOkAt: 0, since: 0 }, { name: 'c', lastOkAt: 9 * MIN, since: 0 }] }));
    expect(t.openKinds()).toEqual(new Map([['wallet_stale', 2]]));
  });
});

describe('evaluateAlerts: signer_unavailable (helper 36)', () => {
  it('opens once a wallet’s signer has not answered for an interval between polls, stays one, and closes when it answers', () => {
    const t = createAlertTracker();
    const down = (since: number) => [{ wallet: 'w1', backend: 'vault', code: 'SIGNER_UNAVAILABLE', detail: 'Vault refused the token (HTTP 403)', since }];
    const at = (now: number, list: AlertInputs['signerUnavailable']) => evaluateAlerts(t, base({ now, signerUnavailable: list })).map((a) => [a.kind, a.change, a.wallet, a.text]);
    // A blip the next turn signs through is not told.
    expect(at(MIN / 2, down(0))).toEqual([]);
    expect(at(MIN, down(0))).toEqual([
      ['signer_unavailable', 'opened', 'w1', 'wallet w1: its vault signer has not signed for 1m (SIGNER_UNAVAILABLE: Vault refused the token (HTTP 403)); its steps wait, planned, nothing sent — they are signed once it answers'],
    ]);
    expect(at(5 * MIN, down(0))).toEqual([]);
    expect(t.openKinds()).toEqual(new Map([['signer_unavailable', 1]]));
    expect(at(6 * MIN, [])).toEqual([['signer_unavailable', 'closed', 'w1', "wallet w1: its signer answers again, or the wallet is no longer this daemon's"]]);
  });

  it('forgets the signer of a wallet taken out of the config, or (in a cluster) moved to another daemon', () => {
    const wallets = [
      { name: 'held', address: 'A1' },
      { name: 'moved', address: 'A2' },
    ];
    const down = () => new Map(['held', 'moved', 'removed'].map((w) => [w, { since: 0 }]));
    // Alone on its state: every configured wallet is this daemon's.
    const alone = down();
    forgetWalletsNotHere(alone, wallets, undefined);
    expect([...alone.keys()]).toEqual(['held', 'moved']);
    // In a cluster: only the wallets whose lease it holds; the one moved away is the other daemon's to sign.
    const inCluster = down();
    forgetWalletsNotHere(inCluster, wallets, new Set(['A1']));
    expect([...inCluster.keys()]).toEqual(['held']);
  });
});
