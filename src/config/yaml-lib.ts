// The yaml library, loaded at its first use. A config the quick read takes (quick-read.ts) and
// that has nothing to report never needs yaml's positioned document, so `once` and `run` need not
// load its ~60 modules (~20 ms and a few MB of start-up). yaml's node entry point is CommonJS, the
// same module `import 'yaml'` would give.
import { lazyRequire } from '../lazy-require.js';

export const yamlLib = lazyRequire<typeof import('yaml')>('yaml');
