/*
 * The claim gap (docs/reliability.md, "The claim gap: protocol, assumptions, model"), in Promela.
 *
 * Two daemons share one wallet's lease and one claim step of one (wallet, epoch) in the database;
 * the service applies the signed requests that reach it inside its timestamp window; the invariant
 * is that at most one claim is applied (the assert in `service`).
 *
 * Time is discrete and unbounded: the database's clock t is kept relative, as each request's age
 * (t - ts), saturating above every threshold. A daemon's clock reads t + d with |d| <= S, the
 * service's t + e with |e| <= E, d and e chosen anew at every reading (a clock anywhere within its
 * bound, drifting as it likes: every fixed offset, and more). A process may be paused between any
 * two statements, for as long as it likes: spin runs them in every order, and `database` may tick
 * the clock and expire the lease meanwhile. A lost COMMIT answer (committed or not), a database
 * restart (losing the transaction in flight, never a committed one), requests lost or delayed and
 * reordered on the wire, answers lost, and a service answering 429 are nondeterministic choices.
 *
 * The step's states are the code's StepState (src/domain.ts), and each inline below is named after
 * the store method (src/store/port.ts) it models; test/model/claim-gap.test.ts checks both.
 *
 * The safe protocol is the model with no -D switch. Each switch below breaks one part of it, and
 * spin must then find a double claim (the test runs them all):
 *   AGE_BELOW_WINDOW      "not applied" judged after an age below the service's window
 *   JUDGE_LOCAL_CLOCK     the age measured on the judging daemon's own clock, which nobody checks
 *   SUMMARY_FIRST         the summary read before the database's now(): a pause between the two
 *   STATE_GUARD_ONLY      a write out of sending or unknown checks the state, not which request
 *   ASSUME_COMMIT         a lost COMMIT answer to markSending taken as committed
 *   DUPLICATES            the wire may deliver a request twice (a retrying proxy): a 429 no longer
 *                         proves that request will never be applied
 * (and -DM=0, a margin below the clock error E). CAPTURE_TOKEN is a second fix for
 * STATE_GUARD_ONLY (with it, spin finds nothing): each write is fenced with the token its
 * operation started under, not the lease manager's current one.
 */

#ifndef W
#define W 1            /* the service accepts |service_now - ts| <= W (api.ts_window) */
#endif
#ifndef S
#define S 1            /* |daemon clock - database clock| <= S (cluster.max_clock_skew) */
#endif
#ifndef E
#define E 1            /* |service clock - database clock| <= E (both on NTP) */
#endif
#ifndef M
#define M E            /* the margin. The code's is larger (docs/reliability.md); a larger one only
                          removes "not applied" verdicts (`old` below is monotone in it), so the
                          smallest margin that verifies covers every larger one */
#endif

#ifdef AGE_BELOW_WINDOW
#define AGE_BOUND (W - 1)
#else
#define AGE_BOUND (W + M)
#endif

#ifdef JUDGE_LOCAL_CLOCK
#define JUDGE_SKEW (M + 1) /* the judge's own clock: not checked against the database's */
#else
#define JUDGE_SKEW 0       /* the database's now() */
#endif

/* a request's age saturates here: every threshold below it is judged exactly */
#if AGE_BOUND > W + E
#define CAP (AGE_BOUND + JUDGE_SKEW + 1)
#else
#define CAP (W + E + JUDGE_SKEW + 1)
#endif
#ifndef MAXREQ
#define MAXREQ 3           /* requests signed in one run */
#endif
#ifndef MAXTOK
#define MAXTOK 3           /* lease acquisitions in one run */
#endif
#define NOBODY 2
#define BIT(r) (1 << (r))

mtype = { planned, sending, acknowledged, rejected, failed, unknown, skipped };   /* StepState */

/* the database: the step (fenced, guarded writes) and the wallet's lease */
mtype st = planned;
byte st_req;               /* the request its last markSending recorded (the attempt) */
byte lease_owner = NOBODY;
byte lease_tok;            /* a new token at every acquisition */
bool lease_live;           /* not expired by the database's clock */

/*
 * The signed requests: the age of the ts each carries (the database's now - ts: time is kept
 * relative, so it runs without end), and the summary each was signed against.
 */
byte nreq;
short age[MAXREQ + 1];
byte req_before[MAXREQ + 1];
byte wire;                 /* requests on the wire, a bit each */
byte said429;              /* requests the service answered 429 */

/* the service */
byte seen;                 /* requests applied: a replay of one is refused */
byte applied;              /* the ledger: claims applied for this (wallet, epoch); also lifetime */

/*
 * The fence: this daemon owns the unexpired lease, with the token it writes with. Without
 * CAPTURE_TOKEN that token is the lease manager's latest, and a daemon's latest token is the
 * lease's token whenever it is the owner: the fence is then owner and expiry alone.
 */
#ifdef CAPTURE_TOKEN
#define FENCED(tk) (lease_owner == me && lease_tok == (tk) && lease_live)
#else
#define FENCED(tk) (lease_owner == me && lease_live)
#endif

#ifdef STATE_GUARD_ONLY
#define IS_SENDING(r) (st == sending)
#define IS_UNKNOWN(r) (st == unknown)
#else
#define IS_SENDING(r) (st == sending && st_req == (r))
#define IS_UNKNOWN(r) (st == unknown && st_req == (r))
#endif

/*
 * Each write is one transaction: the fence (this owner and token hold the unexpired lease, its row
 * locked FOR SHARE until commit) and a guarded UPDATE. A refused write changes nothing.
 */
inline markSending(tk, r) {
  if
  :: FENCED(tk) && st == planned -> st = sending; st_req = r; inflight = true
  :: else -> skip
  fi
}
inline markAcknowledged(tk, r) { if :: FENCED(tk) && IS_SENDING(r) -> st = acknowledged :: else -> skip fi }
inline markFailed(tk, r)       { if :: FENCED(tk) && IS_SENDING(r) -> st = failed :: else -> skip fi }
inline markUnknown(tk, r)      { if :: FENCED(tk) && IS_SENDING(r) -> st = unknown :: else -> skip fi }
inline markNotSent(tk, r)      { if :: FENCED(tk) && IS_SENDING(r) -> st = planned :: else -> skip fi }
inline reconcile(tk, r, isApplied) {
  if
  :: FENCED(tk) && IS_UNKNOWN(r) -> if :: isApplied -> st = acknowledged :: else -> st = planned fi
  :: else -> skip
  fi
}
/* a sending step not in flight in this process becomes unknown: after a takeover, at every turn */
inline recoverInFlight(tk) { if :: FENCED(tk) && st == sending -> st = unknown :: else -> skip fi }

#ifdef CAPTURE_TOKEN
#define K k                /* the token the operation started under */
#define KEEP_TOKEN k = lease_tok
#else
#define K 0                /* the lease manager's token at write time (fence.tokenFor) */
#define KEEP_TOKEN skip
#endif

proctype daemon(byte me) {
  byte k;                  /* CAPTURE_TOKEN: the token the operation started under */
  bool inflight;           /* this process has the step in flight */
  byte r;                  /* the request being sent, or judged */
  short d;                 /* this clock's error at a reading */
  bool old;                /* the request's ts older than AGE_BOUND at the judge's now */
  bool rose;               /* lifetime rose since the summary the request was signed against */

idle:                      /* an operation ends: forget what it held (a smaller state space) */
  atomic { inflight = false; k = 0; r = 0; d = 0; old = false; rose = false }
end:
  do
  :: /* at any turn (first after a takeover): a sending step not in flight here */
     atomic { !inflight && st == sending && FENCED(K) -> KEEP_TOKEN; recoverInFlight(K) }
  :: /* sendClaim: the step read planned, a fresh summary, the request signed on this clock */
     atomic { !inflight && lease_owner == me && st == planned && nreq < MAXREQ ->
              nreq++; r = nreq; KEEP_TOKEN; req_before[r] = applied;
              select (d : -S .. S); age[r] = -d; d = 0 }     /* ts = now + d */
     if
     :: atomic { true -> markSending(K, r); if :: inflight -> skip :: else -> goto idle fi }
     :: true ->       /* COMMIT's answer lost, and it did not commit (a restart lost it), or it did
                         and the re-read finds it, as if its answer had come after a pause */
#ifdef ASSUME_COMMIT
        inflight = true
#else
        if
        :: st == sending && st_req == r -> inflight = true    /* re-read: it committed */
        :: else -> goto idle                                  /* re-read: it did not */
        fi
#endif
     fi;
     /*
      * The rate limiter's wait, a backoff: then the lease again, and a ts that aged too long goes
      * back to planned unsent. When it has aged too long is a daemon's clock and a setting, and
      * both only decide whether a request goes out stale: here the sender may give up at any time.
      */
     if
     :: atomic { !FENCED(K) -> goto idle }
     :: atomic { FENCED(K) -> markNotSent(K, r); goto idle }
     :: FENCED(K)
     fi;
     /* nothing is checked between there and the first byte */
     wire = wire | BIT(r);
     /* the answer: a 429 only when the service said so; anything else, whatever it said */
     if
     :: atomic { said429 & BIT(r) -> markNotSent(K, r) }
     :: atomic { true -> markAcknowledged(K, r) }
     :: atomic { true -> markFailed(K, r) }
     :: atomic { true -> markUnknown(K, r) }         /* timeout, reset, 5xx, the answer lost */
     fi;
     goto idle
  :: /* reconcile an unknown claim from the summary */
#ifdef SUMMARY_FIRST
     /* the step, as the plan was read */
     atomic { lease_owner == me && st == unknown -> KEEP_TOKEN; r = st_req }
     rose = applied > req_before[r];                                  /* freshSummary */
     old = age[r] > AGE_BOUND;                                        /* then the database's now() */
#else
     /* the step and the judge's now (the database's now(), in the same query) */
     atomic { lease_owner == me && st == unknown -> KEEP_TOKEN; r = st_req;
              select (d : -JUDGE_SKEW .. JUDGE_SKEW); old = age[r] + d > AGE_BOUND; d = 0 }
     rose = applied > req_before[r];                                  /* freshSummary, after that now */
#endif
     if
     :: atomic { rose -> reconcile(K, r, true) }
     :: atomic { !rose && old -> reconcile(K, r, false) }
     :: !rose && !old                                 /* stays unknown, looked at again later */
     fi;
     goto idle
  od
}

#ifdef DUPLICATES
#define SEE(r) seen = seen | BIT(r)
#define NOT_SEEN(r) !(seen & BIT(r))
#else
#define SEE(r) skip        /* each request arrives at most once: no replay to refuse */
#define NOT_SEEN(r) true
#endif

proctype service() {
  byte r;
  short e;
end:
  do
  :: atomic {
       wire != 0;
       if
       :: wire & BIT(1) -> r = 1
       :: wire & BIT(2) -> r = 2
       :: wire & BIT(3) -> r = 3
       fi;
#ifdef DUPLICATES
       if :: wire = wire & ~BIT(r) :: skip fi;          /* or a copy stays on the wire */
#else
       wire = wire & ~BIT(r);                          /* delivered at most once */
#endif
       select (e : -E .. E);
       if
       :: NOT_SEEN(r) && age[r] + e <= W && -(age[r] + e) <= W ->    /* |service now - ts| <= W */
          SEE(r); applied++;
          assert(applied <= 1)                           /* no (wallet, epoch) claim applied twice */
       :: true                                           /* refused (outside the window, a replay), or lost */
       :: said429 = said429 | BIT(r)                     /* 429: refused before looking at it */
       fi;
       r = 0; e = 0
     }
  od
}

/*
 * The database's clock, and the lease's expiry by it. The owner renews the lease, and stops
 * believing in it before the database lets another take it; but a process may be paused past any
 * deadline, and no write counts on that belief (each is fenced), so the lease may expire at any
 * moment here: every takeover the real one allows, and more.
 */
proctype database() {
end:
  do
  :: atomic { lease_live -> lease_live = false }          /* the lease expires */
  :: atomic { !lease_live && lease_tok < MAXTOK ->        /* a daemon's lease manager takes it */
       if :: lease_owner = 0 :: lease_owner = 1 fi;       /* (each runs beside its executor) */
       lease_tok++; lease_live = true }
  :: d_step {                                            /* time passes */
       if :: nreq >= 1 && age[1] < CAP -> age[1]++ :: else fi;
       if :: nreq >= 2 && age[2] < CAP -> age[2]++ :: else fi;
       if :: nreq >= 3 && age[3] < CAP -> age[3]++ :: else fi
     }
  od
}

init {
  atomic { run daemon(0); run daemon(1); run service(); run database() }
}
