// Issue 11, hostile server (3 of 4): the wire. Connection resets mid-body, bodies shorter than
// their Content-Length, 3xx, 429 and 503, and (in a few sequences, since they cost real time)
// bodies dripped one byte at a time slower than the client's timeout and headers that come too
// late; with restarts (in-flight steps recovered), crashes at the worker's failpoints, and wallets
// renamed across a restart.
import { hostileSuite } from './hostile-suite.js';

hostileSuite({
  label: 'wire',
  about: 'resets, truncated bodies, drips and restarts',
  share: 0.2,
  profile: {
    readHonest: 10,
    readLie: 5,
    actionHonest: 4,
    actionLie: 8,
    skip: 5,
    claimedLie: 2,
    jumpSmall: 4,
    jumpBig: 1,
    epochBump: 1,
    epochLie: 1,
    broken: 12,
    slowShare: 0.05,
    echo: 1,
    restart: 6,
  },
});
