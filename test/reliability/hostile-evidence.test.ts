// Issue 24 finding 2, hostile server: summaries whose pending and lifetime disagree (pending
// dropped with lifetime flat, short or missing; lifetime falling; an epoch rollover with pending
// moved into lifetime), told on any read — the poll, the one before signing, the reconciliation
// after a lost claim answer — among lost and lying claim answers and crashes. Invariant 6 is this
// file's: nothing sized from a claim runs unless the server's ledger shows that claim applied.
import { hostileSuite } from './hostile-suite.js';

hostileSuite({
  label: 'evidence',
  about: 'summaries whose pending and lifetime disagree',
  share: 0.06,
  profile: {
    readHonest: 10,
    readLie: 1,
    inconsistent: 8,
    actionHonest: 4,
    actionLie: 8,
    skip: 4,
    claimedLie: 2,
    jumpSmall: 3,
    jumpBig: 1,
    epochBump: 1,
    epochLie: 0,
    broken: 1,
    slowShare: 0,
    echo: 0,
    restart: 2,
  },
});
