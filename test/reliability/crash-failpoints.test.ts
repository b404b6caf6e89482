// The failpoint switch itself: inert unless named, strict about what it is given, and
// `after_request_written` fires exactly between "the signed request is on the socket" and "the
// answer is read" — heard from undici's diagnostics channel, on a real loopback request.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { failpointsFromEnv, type RequestWrittenSource } from '../../src/executor/failpoints.js';

describe('AUTOCLAIM_FAILPOINT', () => {
  it('refuses a count that is not a positive integer, so a typo cannot disable a crash test', () => {
    for (const bad of ['after_plan_recorded:0', 'after_plan_recorded:x', 'after_plan_recorded:1.5', 'after_plan_recorded:2:3']) {
      expect(() => failpointsFromEnv({ AUTOCLAIM_FAILPOINT: bad }), bad).toThrow(/must be a positive integer/);
    }
  });

  it('kills once, at the n-th time, not again after', () => {
    let kills = 0;
    const fp = failpointsFromEnv({ AUTOCLAIM_FAILPOINT: 'during_reconciliation:3' }, () => kills++);
    for (let i = 0; i < 5; i++) fp('during_reconciliation');
    expect(kills).toBe(1);
  });

  it('listens to the request writes only when after_request_written is named', () => {
    const subscribed: string[] = [];
    const source: RequestWrittenSource = () => subscribed.push('x');
    failpointsFromEnv({}, () => {}, source);
    failpointsFromEnv({ AUTOCLAIM_FAILPOINT: 'after_sending_committed' }, () => {}, source);
    expect(subscribed).toEqual([]);
    failpointsFromEnv({ AUTOCLAIM_FAILPOINT: 'after_request_written:2' }, () => {}, source);
    expect(subscribed).toEqual(['x']);
  });
});

describe('after_request_written on a real request', () => {
  const pending: ServerResponse[] = [];
  const bodies: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(`${req.method} ${body}`);
      // The answer is held until the test releases it: a kill must come before it.
      pending.push(res);
    });
  });
  const agent = new Agent();

  afterEach(() => {
    for (const r of pending.splice(0)) r.end('{}');
    bodies.length = 0;
  });

  it('fires for a signed POST once its body has reached the server, before any answer; never for a GET', async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const kills: string[] = [];
    failpointsFromEnv({ AUTOCLAIM_FAILPOINT: 'after_request_written:2' }, () => kills.push(`killed after ${bodies.length} request(s) arrived, ${pending.length} unanswered`));

    const waitHeld = async (n: number) => {
      while (pending.length < n) await new Promise((r) => setTimeout(r, 5));
    };
    const send = (method: 'GET' | 'POST' | 'PUT', body?: string) =>
      agent.request({ origin, path: '/v1/x', method, body: body ?? null, headers: body ? { 'content-type': 'application/json' } : {} });

    const get = send('GET');
    await waitHeld(1);
    const post1 = send('POST', '{"wallet":"w","signature":"s1"}');
    await waitHeld(2);
    expect(kills).toEqual([]); // the GET does not count, the first POST is :1
    const put = send('PUT', '{"wallet":"w","signature":"s2"}');
    await waitHeld(3);
    // undici reports the write synchronously, so the kill came before the server even parsed it.
    expect(kills).toEqual(['killed after 2 request(s) arrived, 2 unanswered']);
    expect(bodies[2]).toBe('PUT {"wallet":"w","signature":"s2"}');

    for (const r of pending.splice(0)) r.end('{}');
    await Promise.all([get, post1, put].map(async (p) => (await p).body.text()));
    expect(kills).toHaveLength(1);
    await agent.close();
    await new Promise<void>((r) => server.close(() => r()));
  });
});
