// Issue 11, hostile server (2 of 4): amounts that cannot be trusted. Inflated, negative, zero or
// non-numeric `claimed_sol`, pending jumping between the read a rule decided on and the read right
// before signing, epochs changing under a plan, against varied limits and safety caps.
import { hostileSuite } from './hostile-suite.js';

hostileSuite({
  label: 'amounts',
  about: 'claimed_sol lies, pending jumps and epochs',
  share: 0.25,
  profile: {
    readHonest: 14,
    readLie: 2,
    actionHonest: 6,
    actionLie: 6,
    skip: 3,
    claimedLie: 12,
    jumpSmall: 8,
    jumpBig: 6,
    epochBump: 4,
    epochLie: 2,
    broken: 1,
    slowShare: 0,
    echo: 0,
    restart: 2,
  },
});
