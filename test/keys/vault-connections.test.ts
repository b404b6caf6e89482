// The Vault backend asks Vault with the global fetch, which sends through undici's global
// dispatcher: in the daemon, npm undici 7's Agent (the API client loads undici before any Vault
// request, and Node's fetch uses the dispatcher undici installed). undici 7's Agent can fall into
// a connection per request for the life of the process once a connection ends while a request
// waits on its pool (helper 38, src/api/dispatcher.ts); the global Agent's pools have no
// connection limit, so no signature waits on a pool and the cascade is never met. This holds it
// with signatures four at a time through a proxy that ends every 10th connection. With
// `setGlobalDispatcher(new Agent({ connections: 1 }))` it fails (checked by hand). Counts, not times.
import { getGlobalDispatcher } from 'undici';
import { afterEach, expect, it } from 'vitest';
import { DEFAULT_ENDPOINTS } from '../../src/api/endpoints.js';
import { VaultSigner } from '../../src/keys/backends/vault.js';
import { templatesOf } from '../../src/keys/message.js';
import { generateKeypair } from '../../src/keys/signer.js';
import { TOKEN, transit, type Transit } from '../support/vault-transit.js';

const doubles: Transit[] = [];
afterEach(async () => {
  for (const t of doubles.splice(0)) await t.close();
});

it('200 signatures, four at a time, from a Vault whose proxy ends every 10th connection: a connection per close and per signer at a time, not per signature', async () => {
  // As in the daemon: the fetch goes through an Agent with no connection limit. In the shared test
  // worker it may be Node's bundled undici's Agent, installed by an earlier file's fetch before npm
  // undici was loaded (its class is another copy's); helper 41 checked that one never closes a pool.
  expect(getGlobalDispatcher().constructor.name).toBe('Agent');
  const { secretKey64, address } = generateKeypair();
  const t = await transit({ seed: secretKey64.slice(0, 32), publicKey: secretKey64.slice(32), closeEvery: 10 });
  doubles.push(t);
  const v = new VaultSigner({ address: t.url, mount: 'transit', key: 'treasury', tokenEnv: 'VAULT_TOKEN_T' }, address, { env: { VAULT_TOKEN_T: TOKEN }, templates: templatesOf(DEFAULT_ENDPOINTS) });
  await v.connect(AbortSignal.timeout(5000));
  const at = 4;
  let next = 0;
  await Promise.all(
    Array.from({ length: at }, async () => {
      while (next < 200) {
        next += 1;
        await v.sign({ op: 'claim', wallet: address, ts: 1764000000 + next, epoch: '2026-11-25' }, AbortSignal.timeout(5000));
      }
    }),
  );
  const answers = t.seen.length;
  expect(answers).toBe(201);
  const { made, open } = t.connections();
  // Twenty closes, and for each signer at a time a few (a pool without a limit opens one whenever
  // its own are busy or ending). The cascade opened one for nearly every signature.
  expect(made).toBeLessThanOrEqual(Math.floor(answers / 10) + 4 * at);
  // The ended connections are gone on this side too: no socket kept, no descriptor growth.
  expect(open).toBeLessThanOrEqual(4 * at);
});
