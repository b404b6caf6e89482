// Issue 11, hostile server (4 of 4): echoed secrets. The API key (as is, as `Bearer <key>`,
// JSON-escaped, percent-encoded, with `"` and `\` in it) and the wallet's key material, echoed at
// offsets around where error text is cut, in error bodies, 2xx bodies and summaries.
import { hostileSuite } from './hostile-suite.js';

hostileSuite({
  label: 'echo',
  about: 'echoed secrets',
  share: 0.25,
  profile: {
    readHonest: 10,
    readLie: 4,
    actionHonest: 4,
    actionLie: 8,
    skip: 4,
    claimedLie: 2,
    jumpSmall: 3,
    jumpBig: 1,
    epochBump: 1,
    epochLie: 1,
    broken: 2,
    slowShare: 0,
    echo: 30,
    restart: 2,
  },
});
