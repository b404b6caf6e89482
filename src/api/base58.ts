// Base58 (the Bitcoin alphabet Solana uses) encoding, for loading keys. bs58 (base-x) carries each
// byte through every output digit, ~8 µs for a 64-byte key, and loading a fleet's keys encodes
// three texts a key: the seed's and the whole key's spellings the redactor must know, and the
// address. Here the number is divided by 58^5 over 16-bit limbs, five digits a pass. The text is
// bs58's, byte for byte (test/api/base58.test.ts holds the two to it); decoding stays bs58's.
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const DIGITS_PER_PASS = 5;
/** 58^5: a remainder below it times 2^16 plus a limb stays an exact double (< 2^46). */
const PASS_BASE = 58 ** DIGITS_PER_PASS;
const INVERSE_PASS_BASE = 1 / PASS_BASE;
/** log(256) / log(58): base58 digits per byte. */
const DIGITS_PER_BYTE = 1.3658;

/**
 * Scratch space reused by every call (it is synchronous and calls nothing that could call it
 * again): a fresh pair of typed arrays for each of a fleet's 30,000 texts was ~20 MB of garbage.
 * Zeroed after each use, since it spelled a secret.
 */
let limbSpace = new Uint16Array(64);
let digitSpace = new Uint8Array(128);

export function encodeBase58(bytes: Uint8Array): string {
  const n = bytes.length;
  let zeros = 0;
  while (zeros < n && bytes[zeros] === 0) zeros++;
  // The bytes after the leading zeros as big-endian 16-bit limbs (the first may hold one byte).
  const count = (n - zeros + 1) >> 1;
  if (limbSpace.length < count) limbSpace = new Uint16Array(count);
  const limbs = limbSpace;
  for (let i = n - 1, j = count - 1; i >= zeros; i -= 2, j--) {
    limbs[j] = i - 1 >= zeros ? (bytes[i] ?? 0) | ((bytes[i - 1] ?? 0) << 8) : (bytes[i] ?? 0);
  }
  const size = Math.ceil((n - zeros) * DIGITS_PER_BYTE) + DIGITS_PER_PASS + zeros;
  if (digitSpace.length < size) digitSpace = new Uint8Array(size);
  const out = digitSpace;
  let at = size;
  // Each pass divides the number by 58^5 in place and writes the remainder's five digits, least
  // significant first; the last pass writes only up to its highest non-zero digit.
  for (let first = 0; first < count; ) {
    let rem = 0;
    for (let k = first; k < count; k++) {
      const cur = rem * 0x10000 + (limbs[k] ?? 0);
      // A multiply by the reciprocal instead of a division (the pass is one long chain of them):
      // the quotient it gives is off by at most one, mended by the remainder's sign and size.
      let q = Math.floor(cur * INVERSE_PASS_BASE);
      let r = cur - q * PASS_BASE;
      if (r < 0) {
        q--;
        r += PASS_BASE;
      } else if (r >= PASS_BASE) {
        q++;
        r -= PASS_BASE;
      }
      limbs[k] = q;
      rem = r;
    }
    while (first < count && limbs[first] === 0) first++;
    // Below 58^5 < 2^31: int32 arithmetic, which the compiler divides by 58 with a multiply.
    for (let d = 0, r = rem | 0; d < DIGITS_PER_PASS && (first < count || r > 0); d++) {
      const q = (r / 58) | 0;
      out[--at] = CODES[r - q * 58] ?? 0;
      r = q;
    }
  }
  // A leading zero byte is a '1' (base58's zero digit) of its own.
  for (let z = 0; z < zeros; z++) out[--at] = 0x31;
  const text = Buffer.from(out.buffer, out.byteOffset + at, size - at).toString('latin1');
  out.fill(0, at, size); // it spelled a secret (the limbs are zero by now: divided down to nothing)
  return text;
}
