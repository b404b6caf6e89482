// The process's event channel (src/events.ts): listeners in subscription order, unsubscribing,
// and no listener able to throw into the code that emits.
import { describe, expect, it } from 'vitest';
import { createEvents, LOG_EVENTS, type AutoclaimEventName, type ListenerFailureLog } from '../src/events.js';

const STEP = { kind: 'claim', state: 'acknowledged', wallet: 'w', plan: 1, step: 1 } as const;

function failureLog(): ListenerFailureLog & { lines: Array<{ name: AutoclaimEventName; err: unknown; msg: string }> } {
  const lines: Array<{ name: AutoclaimEventName; err: unknown; msg: string }> = [];
  return { lines, error: (fields, msg) => void lines.push({ name: fields.name, err: fields.err, msg }) };
}

describe('createEvents', () => {
  it('hands each listener the payload, in subscription order, and only for its event', () => {
    const events = createEvents();
    const heard: string[] = [];
    events.on('step:outcome', (e) => heard.push(`a:${e.step}`));
    events.on('cycle:done', (e) => heard.push(`cycle:${e.at}`));
    events.on('step:outcome', (e) => heard.push(`b:${e.step}`));
    events.emit('step:outcome', STEP);
    events.emit('cycle:done', { at: 5, wallets: 2 });
    expect(heard).toEqual(['a:1', 'b:1', 'cycle:5']);
  });

  it('stops calling a listener once unsubscribed, by off or by the function on returned', () => {
    const events = createEvents();
    const heard: string[] = [];
    const a = () => void heard.push('a');
    events.on('cycle:done', a);
    const offB = events.on('cycle:done', () => void heard.push('b'));
    events.emit('cycle:done', { at: 1, wallets: 0 });
    events.off('cycle:done', a);
    events.emit('cycle:done', { at: 2, wallets: 0 });
    offB();
    offB(); // twice is harmless
    events.emit('cycle:done', { at: 3, wallets: 0 });
    expect(heard).toEqual(['a', 'b', 'b']);
  });

  it('logs a listener that throws, still calls the others, and never throws to the emitter', () => {
    const log = failureLog();
    const events = createEvents({ logger: log });
    const heard: string[] = [];
    events.on('step:outcome', () => {
      throw new Error('metrics bug');
    });
    events.on('step:outcome', () => void heard.push('webhook'));
    expect(() => events.emit('step:outcome', STEP)).not.toThrow();
    expect(heard).toEqual(['webhook']);
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]?.name).toBe('step:outcome');
    expect((log.lines[0]?.err as Error).message).toBe('metrics bug');
  });

  it('does not throw when the failure log itself throws, or when there is none', () => {
    const broken = createEvents({
      logger: {
        error: () => {
          throw new Error('log down');
        },
      },
    });
    const bare = createEvents();
    for (const events of [broken, bare]) {
      events.on('cycle:done', () => {
        throw new Error('listener bug');
      });
      expect(() => events.emit('cycle:done', { at: 1, wallets: 0 })).not.toThrow();
    }
  });

  it('delivers an event to the listeners subscribed when it was emitted', () => {
    const events = createEvents();
    const heard: string[] = [];
    const late = () => void heard.push('late');
    let offSecond = () => {};
    events.on('cycle:done', () => {
      heard.push('first');
      events.on('cycle:done', late);
      offSecond();
    });
    offSecond = events.on('cycle:done', () => void heard.push('second'));
    events.emit('cycle:done', { at: 1, wallets: 0 });
    expect(heard).toEqual(['first', 'second']);
    events.emit('cycle:done', { at: 2, wallets: 0 });
    expect(heard).toEqual(['first', 'second', 'first', 'late']);
  });
});

describe('LOG_EVENTS', () => {
  it('names each log event once, as area.what', () => {
    expect(new Set(LOG_EVENTS).size).toBe(LOG_EVENTS.length);
    for (const name of LOG_EVENTS) expect(name).toMatch(/^[a-z]+\.[a-z_]+$/);
  });
});
