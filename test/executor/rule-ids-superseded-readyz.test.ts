// /readyz is 503 while the rule ids cannot be read (RuleIdsSettling.unread, ce21454). A settling
// superseded by a reload says nothing about the config in force: when the start's read fails only
// after the reload's read has answered, the newer settling already cleared the failure, and the
// stale one set it again. Nothing asked again (`failed` is only the current settling's), so every
// turn decided while /readyz said "cannot be read" until the next reload or restart.
import { expect, it } from 'vitest';
import type { AppConfig } from '../../src/domain.js';
import { RuleIdsSettling } from '../../src/executor/rule-ids-settle.js';
import { silentLogger } from '../../src/log/logger.js';

it('a superseded settling whose read fails late does not leave /readyz at "cannot be read"', async () => {
  const reads: Array<{ resolve: (v: []) => void; reject: (e: Error) => void }> = [];
  const store = { latestRulePlans: () => new Promise<[]>((resolve, reject) => void reads.push({ resolve, reject })) };
  let config = { rules: [] } as unknown as AppConfig;
  const ids = new RuleIdsSettling({ store, logger: silentLogger(), current: () => config, apply: (c) => void (config = c), now: () => 0 });

  ids.settle(); // the start: its read hangs (a query past its deadline, say)
  const start = ids.settled();
  config = { rules: [] } as unknown as AppConfig; // a reload
  ids.settle();
  reads[1]!.resolve([]); // the reload's read answers
  expect(await ids.settled()).toBe(true);
  expect(ids.unread()).toBeUndefined();

  reads[0]!.reject(new Error('canceling statement due to statement timeout')); // the start's, late
  await start;
  ids.again(); // a turn: nothing to ask again, the settling in force answered
  expect(reads).toHaveLength(2);
  expect(await ids.settled()).toBe(true);
  expect(ids.unread()).toBeUndefined();
});

it('a superseded settling whose read answers late does not say ready while the read in force failed', async () => {
  const reads: Array<{ resolve: (v: []) => void; reject: (e: Error) => void }> = [];
  const store = { latestRulePlans: () => new Promise<[]>((resolve, reject) => void reads.push({ resolve, reject })) };
  let config = { rules: [] } as unknown as AppConfig;
  const ids = new RuleIdsSettling({ store, logger: silentLogger(), current: () => config, apply: (c) => void (config = c), now: () => 0 });

  ids.settle();
  const start = ids.settled();
  config = { rules: [] } as unknown as AppConfig; // a reload
  ids.settle();
  reads[1]!.reject(new Error('database is locked')); // the reload's read fails: its config's ids are not settled
  expect(await ids.settled()).toBe(false);
  expect(ids.unread()).toMatch(/cannot be read/);

  reads[0]!.resolve([]); // the start's read answers late, for a config no longer in force
  await start;
  expect(ids.unread()).toMatch(/cannot be read/);
});
