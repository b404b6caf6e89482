// V8 settings for an autoclaim process, set at the process edge (main.ts) before any work, so they
// hold however the process was started: `npm start`, the systemd unit, the image, or `autoclaim
// once` typed by hand. Both bound peak memory; neither changes what the program does.
import { setFlagsFromString } from 'node:v8';

export const V8_FLAGS = [
  // undici parses HTTP with llhttp compiled to WebAssembly. V8 first compiles it with its baseline
  // compiler (Liftoff), then recompiles the hot functions with TurboFan in the background; that
  // recompilation alone raised peak RSS by ~30 MB in a 100-wallet `once` (115 → 85 MB). Parsing
  // a small response with baseline code costs no measurable CPU per poll.
  '--liftoff-only',
  // After each full collection V8 lets the heap grow by a factor it picks from how fast it
  // collects against how fast the program runs: up to 4×, and more the busier the machine, which
  // is why the same 10,000-wallet `once` peaked at 142 MB in one run and 188 MB in the next. 1.5×
  // keeps the peak near what is live (more full collections of a heap of a few tens of MB).
  '--heap-growing-percent=50',
] as const;

/** Sets V8_FLAGS. Must run before the first HTTP connection (llhttp is compiled on it). */
export function applyV8Flags(set: (flags: string) => void = setFlagsFromString): void {
  for (const flag of V8_FLAGS) set(flag);
}
