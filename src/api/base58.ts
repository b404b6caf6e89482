// Base58 (the Bitcoin alphabet Solana uses) encoding, for loading keys. bs58 (base-x) carries each
// byte through every output digit, ~8 µs for a 64-byte key, and loading a fleet's keys encodes
// three texts a key: the seed's and the whole key's spellings the redactor must know, and the
// address. Here the number is divided by 58^5 over 16-bit limbs, five digits a pass. The text is
// bs58's, byte for byte (test/api/base58.test.ts holds the two to it). Checking a fleet's
// addresses decodes into limbs too, two digits a pass (decodeBase58); signatures and secrets from
// the environment are still decoded by bs58.
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const DIGITS_PER_PASS = 5;
/** 58^5: a remainder below it times 2^16 plus a limb stays an exact double (< 2^46). */
const PASS_BASE = 58 ** DIGITS_PER_PASS;
const INVERSE_PASS_BASE = 1 / PASS_BASE;
/** log(256) / log(58): base58 digits per byte. */
const DIGITS_PER_BYTE = 1.3658;
/** Base58 digits the decoder multiplies in a pass: 58^2 keeps every step a small integer. */
const DECODE_DIGITS_PER_PASS = 2;
/** log(58) / log(256): bytes per base58 digit, rounded up. */
const BYTES_PER_DIGIT = 0.7323;
/** Each alphabet character's digit by its code; -1 for any other code below 128. */
const DIGIT_OF = new Int8Array(128).fill(-1);
for (let d = 0; d < ALPHABET.length; d++) DIGIT_OF[ALPHABET.charCodeAt(d)] = d;

/**
 * Scratch space reused by every call (it is synchronous and calls nothing that could call it
 * again): a fresh pair of typed arrays for each of a fleet's 30,000 texts was ~20 MB of garbage.
 * Zeroed after each use, since it spelled a secret.
 */
let limbSpace = new Uint16Array(64);
/** The decoder's limbs, least significant first; zero outside a call (it may read a secret). */
let decodeSpace = new Uint16Array(64);
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

/**
 * The bytes of a base58 text, as bs58 decodes them (a leading '1' is a zero byte of its own), or
 * undefined for a character outside the alphabet where bs58 throws. Two digits are multiplied in
 * a pass into 16-bit limbs, least significant first: ~2-3× bs58's speed on a cold first pass.
 */
export function decodeBase58(text: string): Uint8Array | undefined {
  const n = text.length;
  let zeros = 0;
  while (zeros < n && text.charCodeAt(zeros) === 0x31) zeros++;
  const count = ((Math.ceil((n - zeros) * BYTES_PER_DIGIT) + 1) >> 1) + 1;
  if (decodeSpace.length < count) decodeSpace = new Uint16Array(count);
  const limbs = decodeSpace;
  let used = 0;
  for (let i = zeros; i < n; ) {
    let value = 0;
    let scale = 1;
    for (let k = 0; k < DECODE_DIGITS_PER_PASS && i < n; k++, i++) {
      const code = text.charCodeAt(i);
      const digit = code < 128 ? (DIGIT_OF[code] ?? -1) : -1;
      if (digit < 0) {
        limbs.fill(0, 0, used);
        return undefined;
      }
      value = value * 58 + digit;
      scale *= 58;
    }
    // limbs = limbs × scale + value, in small integers: a limb (< 2^16) × scale (≤ 58^2) plus the
    // carry (< 2^12) stays below 2^28, so no step makes a heap number (the first pass over a
    // fleet's addresses runs before the compiler has looked at this code).
    let carry = value;
    for (let j = 0; j < used; j++) {
      const x = (limbs[j] ?? 0) * scale + carry;
      limbs[j] = x & 0xffff;
      carry = x >>> 16;
    }
    for (; carry > 0; carry >>>= 16) limbs[used++] = carry & 0xffff;
  }
  const top = limbs[used - 1] ?? 0;
  const numberBytes = used === 0 ? 0 : used * 2 - (top < 0x100 ? 1 : 0);
  const out = new Uint8Array(zeros + numberBytes);
  for (let j = 0, at = out.length - 1; j < used; j++) {
    const limb = limbs[j] ?? 0;
    out[at--] = limb & 0xff;
    if (at >= zeros) out[at--] = limb >> 8;
  }
  limbs.fill(0, 0, used);
  return out;
}
