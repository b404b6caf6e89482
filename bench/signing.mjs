// §6 signing: Ed25519 signatures per second with node:crypto (src/keys/signer.ts) against tweetnacl,
// on the message a claim signs; and the key set-up that start-up pays once per wallet.
import { createPrivateKey } from 'node:crypto';
import { join } from 'node:path';
import { DIST, median } from './lib/common.mjs';

const { generateKeypair, signerFromSeed } = await import(join(DIST, 'keys/signer.js'));
const nacl = (await import('tweetnacl')).default;

/** Calls fn in batches until at least `ms` have passed; returns calls per second. */
function rate(fn, ms = 400) {
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 20; i++) fn(i);
    calls += 20;
    elapsed = performance.now() - start;
  }
  return (calls * 1000) / elapsed;
}

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function benchSigning({ runs = 5 } = {}) {
  const { secretKey64, address } = generateKeypair();
  const seed = secretKey64.slice(0, 32);
  const signer = signerFromSeed(seed);
  const naclKey = nacl.sign.keyPair.fromSeed(seed).secretKey;
  const message = new TextEncoder().encode(`${address}|1767225600`);
  // Both must agree byte for byte, or the comparison means nothing.
  if (Buffer.compare(Buffer.from(signer.sign(message)), Buffer.from(nacl.sign.detached(message, naclKey))) !== 0) throw new Error('signatures differ');
  const rows = { nodeSign: [], naclSign: [], nodeKeyJwk: [], nodeKeyPkcs8: [], naclKey: [] };
  for (let r = 0; r < runs; r++) {
    rows.nodeSign.push(rate(() => signer.sign(message)));
    rows.naclSign.push(rate(() => nacl.sign.detached(message, naclKey)));
    rows.nodeKeyJwk.push(rate(() => signerFromSeed(seed)));
    rows.nodeKeyPkcs8.push(rate(() => createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' })));
    rows.naclKey.push(rate(() => nacl.sign.keyPair.fromSeed(seed), 200));
  }
  const m = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, median(v)]));
  return { runs, perSec: m, signRatio: m.nodeSign / m.naclSign, keyRatio: m.nodeKeyJwk / m.naclKey };
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(benchSigning());
