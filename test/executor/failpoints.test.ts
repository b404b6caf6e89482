import { describe, expect, it } from 'vitest';
import { failpointsFromEnv } from '../../src/executor/failpoints.js';

describe('failpointsFromEnv', () => {
  it('is inert without the variable', () => {
    let kills = 0;
    const fp = failpointsFromEnv({}, () => kills++);
    fp('after_sending_committed');
    expect(kills).toBe(0);
  });

  it('fires at the n-th time the named point is reached, and only there', () => {
    let kills = 0;
    const fp = failpointsFromEnv({ AUTOCLAIM_FAILPOINT: 'after_sending_committed:2' }, () => kills++);
    fp('after_plan_recorded');
    fp('after_sending_committed');
    expect(kills).toBe(0);
    fp('after_sending_committed');
    expect(kills).toBe(1);
  });

  it('refuses an unknown name so a typo cannot disable a crash test', () => {
    expect(() => failpointsFromEnv({ AUTOCLAIM_FAILPOINT: 'after_sendign' })).toThrow(/unknown failpoint "after_sendign"/);
  });
});
