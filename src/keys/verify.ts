// The independent Ed25519 verifier: tweetnacl, another implementation than the node:crypto that
// signs (signer.ts), so that the two agreeing is a check of the signing (the tests use it; the
// sandbox verifies with tweetnacl too). The daemon itself never verifies, and keeping this out of
// signer.ts keeps tweetnacl (its module loading) out of every start of the daemon.
import bs58 from 'bs58';
import nacl from 'tweetnacl';

/** Independent check with tweetnacl; false for any malformed input rather than a throw. */
export function verifySignature(message: Uint8Array, signature: Uint8Array, addressBase58: string): boolean {
  let pub: Uint8Array;
  try {
    pub = bs58.decode(addressBase58);
  } catch {
    return false;
  }
  if (pub.length !== nacl.sign.publicKeyLength || signature.length !== nacl.sign.signatureLength) return false;
  return nacl.sign.detached.verify(message, signature, pub);
}
