// Every fast-check property runs under a seed that can be given: $FC_SEED replays a run, else a
// new one is taken from the time. fast-check prints the seed (and the path to the counterexample)
// in every failure it reports, so a failing property is replayed with FC_SEED=<seed>. A property
// that names its own seed (the hostile suites, signer, agreement) keeps it. Loaded by vitest for
// every test file (vitest.config.ts setupFiles).
import fc from 'fast-check';
import { seedFrom } from './prng.js';

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: seedFrom('FC_SEED') });
