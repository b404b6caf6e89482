// Issue 11, hostile server (1 of 4): answers that lie about what was done. Wrong statuses, failure
// bodies under 2xx, 202 pending, no status, empty or unreadable bodies, applied-but-answered-500
// and not-applied-but-answered-pending, on every signed request of several cycles.
import { hostileSuite } from './hostile-suite.js';

hostileSuite({
  label: 'answers',
  about: 'lying statuses and bodies',
  share: 0.3,
  profile: {
    readHonest: 12,
    readLie: 3,
    actionHonest: 3,
    actionLie: 10,
    skip: 6,
    claimedLie: 3,
    jumpSmall: 4,
    jumpBig: 1,
    epochBump: 1,
    epochLie: 2,
    broken: 2,
    slowShare: 0,
    echo: 1,
    restart: 2,
  },
});
