// The yaml library, loaded at its first use. A config the quick read takes (quick-read.ts) and
// that has nothing to report never needs yaml's positioned document, so `once` and `run` need not
// load its ~60 modules (~20 ms and a few MB of start-up). Synchronous, as the pipeline is: yaml's
// node entry point is CommonJS, the same module `import 'yaml'` would give.
import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');

let loaded: Yaml | undefined;

export function yamlLib(): Yaml {
  return (loaded ??= createRequire(import.meta.url)('yaml') as Yaml);
}
