// Helper 36: a backend that stops answering (Vault or KMS black-holed, an HSM hung, the signer
// service stuck) held each wallet turn that had a step to sign for the whole 10 s deadline. The
// fleet's turns share 16 lanes: a few hundred such wallets slowed every wallet's polls, those with
// keys elsewhere too, to a crawl. After one request to a backend location goes unanswered, the
// others for the same location are put back at once (SIGNER_UNAVAILABLE, unanswered) for a while,
// instead of each waiting out its deadline; an answer, or the while passing, asks it again.
import { expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { askSigner, HUNG_BACKEND_PAUSE_MS } from '../../src/executor/signing-guard.js';
import { messageFor, templatesOf } from '../../src/keys/message.js';
import type { SignAction, SignResult, WalletSigner } from '../../src/keys/port.js';
import { generateKeypair, signerFromSeed } from '../../src/keys/signer.js';

const templates = templatesOf(DEFAULT_ENDPOINTS);

/** A remote-like signer at `location` whose answers the test releases; `asked` counts what reached it. */
function backend(location: string) {
  const { secretKey64, address } = generateKeypair();
  const key = signerFromSeed(secretKey64.subarray(0, 32));
  const held: Array<() => void> = [];
  const state = { asked: 0, hang: true };
  const signer: WalletSigner & { location: string } = {
    address,
    backend: 'vault',
    location,
    sign(action: SignAction, signal: AbortSignal): Promise<SignResult> {
      state.asked++;
      const message = messageFor(templates, action);
      const answer = { message, signature: key.sign(new TextEncoder().encode(message)) };
      if (!state.hang) return Promise.resolve(answer);
      // Like C_Sign on a hung token, it cannot be aborted: the answer comes when it comes.
      void signal;
      return new Promise((resolve) => held.push(() => resolve(answer)));
    },
  };
  return { signer, state, held, action: (ts: number): SignAction => ({ op: 'claim', wallet: address, ts, epoch: '2026-11-26' }) };
}

it('after one request goes unanswered, the others for that location are put back at once until it answers or the pause passes', async () => {
  let now = 0;
  const clock = { monotonic: () => now };
  const loc = `vault http://127.0.0.1:1/${Math.random()}`;
  const a = backend(loc);
  const b = backend(loc);
  const elsewhere = backend(`${loc}-other`);
  const ask = (w: ReturnType<typeof backend>, ts: number) => askSigner(w.signer, w.action(ts), messageFor(templates, w.action(ts)), 50, clock);

  expect(await ask(a, 1)).toMatchObject({ ok: false, unanswered: true, code: 'SIGNER_TIMEOUT' });
  // Another wallet on the same Vault: not asked, put back at once.
  const fast = await ask(b, 2);
  expect(fast).toMatchObject({ ok: false, unanswered: true, code: 'SIGNER_UNAVAILABLE' });
  expect(b.state.asked).toBe(0);
  // A wallet on another backend is asked as usual.
  elsewhere.state.hang = false;
  expect(await ask(elsewhere, 3)).toMatchObject({ ok: true });
  // The pause passes: asked again.
  now += HUNG_BACKEND_PAUSE_MS;
  b.state.hang = false;
  expect(await ask(b, 4)).toMatchObject({ ok: true });
  expect(b.state.asked).toBe(1);

  // Hung again; then the late answer of the hung request arrives: the backend is alive, asked again at once.
  b.state.hang = true;
  expect(await ask(b, 5)).toMatchObject({ ok: false, code: 'SIGNER_TIMEOUT' });
  expect(await ask(a, 6)).toMatchObject({ ok: false, code: 'SIGNER_UNAVAILABLE' });
  b.held.at(-1)!();
  await new Promise((r) => setImmediate(r));
  a.state.hang = false;
  expect(await ask(a, 7)).toMatchObject({ ok: true });
});
