// The notices of `once` and `send`: the step outcomes they cause go to the webhook and the channels
// like the daemon's, and are delivered before the command exits, for at most NOTICE_WAIT_MS. What is
// not delivered by then (a receiver down, a retry not yet due) stays in the state database's outbox,
// where the next `run` (or `once`) sends it. A notifier that cannot be built (a channel secret gone
// since the check) is logged and costs the command nothing: notices never stop money moving.
import { hostname } from 'node:os';
import type { AutoclaimEvents } from '../../events.js';
import type { Runtime } from '../../runtime.js';
import type { CommandContext } from '../context.js';

/** The bounded wait at exit. */
export const NOTICE_WAIT_MS = 10_000;

export interface CommandNotices {
  /** Delivers what is due for up to `timeoutMs`, then stops; the rest waits in the outbox. */
  close(timeoutMs?: number): Promise<void>;
}

export async function openNotices(ctx: CommandContext, runtime: Runtime, events: Pick<AutoclaimEvents, 'on'>): Promise<CommandNotices | undefined> {
  const { io, logger, redactor } = ctx;
  const alerts = runtime.config.alerts;
  try {
    const { createFailureWebhook } = await import('../../service/webhook-events.js');
    const base = (await import('../../service/runbook.js')).runbookBase(alerts.runbookBaseUrl);
    const hook = createFailureWebhook({
      env: io.env,
      logger,
      redactor,
      store: runtime.store,
      settings: { expireMs: alerts.webhookExpireMs, timeoutMs: alerts.webhookTimeoutMs, allowLinkLocal: alerts.webhookAllowLinkLocal },
      clock: io.clock,
      events: () => alerts.webhookEvents,
      minSeverity: () => alerts.webhookMinSeverity,
      runbookBase: () => base,
      channels: alerts.channels,
      host: hostname(),
      instance: `${hostname()}/${process.pid}`,
    });
    if (hook === undefined) return undefined;
    const off = events.on('step:outcome', (e) => hook.onStep(e));
    return {
      async close(timeoutMs = NOTICE_WAIT_MS) {
        off();
        await hook.close(timeoutMs);
      },
    };
  } catch (err) {
    logger.warn({ event: 'notify.webhook_failed', err }, 'notifications are off for this command: the notifier could not be set up');
    return undefined;
  }
}
