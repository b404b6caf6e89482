// A CommonJS package loaded at its first use, synchronously: for a package most starts of the
// daemon never need (yaml's positioned document, tweetnacl's demo keys), whose module loading
// would otherwise be paid at every start, and for one file of a package instead of its index
// (undici's Agent, api/dispatcher.ts). `import` would load it up front; `import()` is async,
// and the code that needs it (the config pipeline, the demo world, the client) is not.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A function that loads `id` the first time it is called and returns the same module after. */
export function lazyRequire<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(id) as T);
}
