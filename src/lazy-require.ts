// A CommonJS package loaded at its first use, synchronously: for a package only some configs use
// (pkcs11js, an optional dependency that may not be built; the AWS SDK; nodemailer; tweetnacl for
// the sandbox's demo keys). A static `import` would load it, or fail for want of it, at every
// start of every command; `import()` is async, and the constructors that need it are not.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A function that loads `id` the first time it is called and returns the same module after. */
export function lazyRequire<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(id) as T);
}
