// Schema migrations, applied in order at open, each in its own transaction, tracked with
// PRAGMA user_version (= how many of these have been applied). Never edit a released entry:
// append a new one.
//
// Lamports are stored as TEXT holding the decimal integer (e.g. '18446744073709551615'). SQLite's
// INTEGER is a signed 64-bit value and cannot hold u64::MAX lamports; TEXT loses nothing and reads
// back with BigInt(). The CHECKs keep anything but plain digits out. Times are INTEGER Unix ms.
//
// Tables (as of the newest migration):
//   wallet_state  the last poll of each wallet address and the last good summary; `wallet` is the
//                 name it was last polled under, a label only
//   epochs_seen   every (address, epoch) ever observed, to tell when a new epoch starts
//   plans         one row per rule firing; UNIQUE(address, rule, epoch, seq, dry) is the
//                 exactly-once key of SPEC §2 (`wallet`, the configured name, is a label);
//                 cancelled_at/cancelled_by: who stopped a queued plan (`send --cancel`), and when;
//                 claimed_proved: claimed_lamports may size the claim's share steps (migration 6)
//   steps         the actions of a plan; `state` walks planned → sending → acknowledged |
//                 rejected | unknown (or skipped). `request` is the JSON of what was signed and
//                 sent, never the Authorization header; for a claim it also holds the summary it
//                 was sent against (`before`), so an unknown claim can be reconciled after a restart.
//   attempts      an audit row for every send of a step, with its outcome
//   outbox        notices (webhook, later other channels) kept until delivered or expired
//   signed_ts     the newest request ts each address signed: a running maximum over attempts,
//                 kept by their triggers (migration 5)

const LAMPORTS = (col: string): string => `(${col} IS NULL OR (${col} <> '' AND ${col} NOT GLOB '*[^0-9]*'))`;

export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE wallet_state (
    wallet            TEXT    PRIMARY KEY,
    address           TEXT    NOT NULL,
    last_poll_at      INTEGER NOT NULL,
    last_ok_at        INTEGER,
    last_error        TEXT,
    epoch             TEXT,
    pending_lamports  TEXT    CHECK ${LAMPORTS('pending_lamports')},
    lifetime_lamports TEXT    CHECK ${LAMPORTS('lifetime_lamports')},
    rank              INTEGER,
    tier              TEXT,
    summary_raw       TEXT,
    updated_at        INTEGER NOT NULL
  ) STRICT;

  CREATE TABLE epochs_seen (
    wallet        TEXT    NOT NULL,
    epoch         TEXT    NOT NULL,
    first_seen_at INTEGER NOT NULL,
    PRIMARY KEY (wallet, epoch)
  ) STRICT, WITHOUT ROWID;

  CREATE TABLE plans (
    id                INTEGER PRIMARY KEY,
    wallet            TEXT    NOT NULL,
    address           TEXT    NOT NULL,
    rule              TEXT    NOT NULL,
    epoch             TEXT    NOT NULL,
    seq               INTEGER NOT NULL CHECK (seq >= 0),
    dry               INTEGER NOT NULL CHECK (dry IN (0, 1)),
    status            TEXT    NOT NULL CHECK (status IN ('open', 'done', 'failed', 'blocked', 'dry')),
    estimate_lamports TEXT    NOT NULL CHECK ${LAMPORTS('estimate_lamports')},
    claimed_lamports  TEXT    CHECK ${LAMPORTS('claimed_lamports')},
    reason            TEXT    NOT NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    UNIQUE (wallet, rule, epoch, seq, dry)
  ) STRICT;
  CREATE INDEX plans_by_wallet_time ON plans (wallet, created_at);
  CREATE INDEX plans_by_status ON plans (status);

  CREATE TABLE steps (
    id              INTEGER PRIMARY KEY,
    plan_id         INTEGER NOT NULL REFERENCES plans (id),
    idx             INTEGER NOT NULL CHECK (idx >= 0),
    kind            TEXT    NOT NULL CHECK (kind IN ('claim', 'deposit', 'mint')),
    symbol          TEXT,
    amount_spec     TEXT,
    amount_lamports TEXT    CHECK ${LAMPORTS('amount_lamports')},
    state           TEXT    NOT NULL
                    CHECK (state IN ('planned', 'sending', 'acknowledged', 'rejected', 'unknown', 'skipped')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    request         TEXT,
    response_status INTEGER,
    response_raw    TEXT,
    error           TEXT,
    resolution      TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (plan_id, idx),
    CHECK ((kind = 'claim') = (symbol IS NULL)),
    CHECK ((kind = 'claim') = (amount_spec IS NULL))
  ) STRICT;
  CREATE INDEX steps_by_state ON steps (state);

  CREATE TABLE attempts (
    id          INTEGER PRIMARY KEY,
    step_id     INTEGER NOT NULL REFERENCES steps (id),
    n           INTEGER NOT NULL,
    request     TEXT,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    outcome     TEXT    CHECK (outcome IS NULL OR outcome IN ('acknowledged', 'rejected', 'unknown', 'not_sent')),
    status      INTEGER,
    error       TEXT,
    UNIQUE (step_id, n)
  ) STRICT;
  `,
  // 2: a wallet is its address. Version 1 keyed plans, poll records and epochs by the configured
  // name, so renaming a wallet let the same address plan (and deposit) a second time in one epoch.
  // Tables are rebuilt (SQLite cannot change a UNIQUE constraint in place); the migration runs with
  // foreign keys off and is checked with foreign_key_check before it commits (see db.ts).
  // Plans that version 1 let collide under the new key (a renamed wallet's second plan in the same
  // epoch) are kept, moved to the next free seq after the highest of their (address, rule, epoch).
  // The same rebuild makes room for what the real service needs: plan status `rejected` (the
  // action was refused; version 1 called that `failed`) beside `failed` (the request itself was
  // wrong: bad signature, headers, auth), step kinds withdraw and burn, the step state `failed`,
  // the server's x-request-id on each attempt, and `manual_id`, the id of a one-off `send`.
  `
  CREATE TABLE plans_v2 (
    id                INTEGER PRIMARY KEY,
    wallet            TEXT    NOT NULL,
    address           TEXT    NOT NULL,
    rule              TEXT    NOT NULL,
    epoch             TEXT    NOT NULL,
    seq               INTEGER NOT NULL CHECK (seq >= 0),
    dry               INTEGER NOT NULL CHECK (dry IN (0, 1)),
    status            TEXT    NOT NULL CHECK (status IN ('open', 'done', 'rejected', 'failed', 'blocked', 'dry')),
    estimate_lamports TEXT    NOT NULL CHECK ${LAMPORTS('estimate_lamports')},
    claimed_lamports  TEXT    CHECK ${LAMPORTS('claimed_lamports')},
    reason            TEXT    NOT NULL,
    manual_id         TEXT    UNIQUE,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    UNIQUE (address, rule, epoch, seq, dry)
  ) STRICT;
  WITH ranked AS (
    SELECT p.*,
           ROW_NUMBER() OVER (PARTITION BY address, rule, epoch, seq, dry ORDER BY id) AS rn,
           MAX(seq) OVER (PARTITION BY address, rule, epoch, dry) AS top
    FROM plans p
  ), moved AS (
    SELECT id, top + ROW_NUMBER() OVER (PARTITION BY address, rule, epoch, dry ORDER BY id) AS new_seq
    FROM ranked WHERE rn > 1
  )
  INSERT INTO plans_v2 (id, wallet, address, rule, epoch, seq, dry, status, estimate_lamports,
                        claimed_lamports, reason, created_at, updated_at)
  SELECT r.id, r.wallet, r.address, r.rule, r.epoch, COALESCE(m.new_seq, r.seq), r.dry,
         CASE r.status WHEN 'failed' THEN 'rejected' ELSE r.status END,
         r.estimate_lamports, r.claimed_lamports, r.reason, r.created_at, r.updated_at
  FROM ranked r LEFT JOIN moved m ON m.id = r.id;
  DROP TABLE plans;
  ALTER TABLE plans_v2 RENAME TO plans;
  CREATE INDEX plans_by_address_time ON plans (address, created_at);
  CREATE INDEX plans_by_status ON plans (status);

  CREATE TABLE steps_v2 (
    id              INTEGER PRIMARY KEY,
    plan_id         INTEGER NOT NULL REFERENCES plans (id),
    idx             INTEGER NOT NULL CHECK (idx >= 0),
    kind            TEXT    NOT NULL CHECK (kind IN ('claim', 'deposit', 'mint', 'withdraw', 'burn')),
    symbol          TEXT,
    amount_spec     TEXT,
    amount_lamports TEXT    CHECK ${LAMPORTS('amount_lamports')},
    state           TEXT    NOT NULL
                    CHECK (state IN ('planned', 'sending', 'acknowledged', 'rejected', 'failed', 'unknown', 'skipped')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    request         TEXT,
    response_status INTEGER,
    response_raw    TEXT,
    request_id      TEXT,
    error           TEXT,
    resolution      TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (plan_id, idx),
    CHECK ((kind = 'claim') = (symbol IS NULL)),
    CHECK ((kind = 'claim') = (amount_spec IS NULL))
  ) STRICT;
  INSERT INTO steps_v2 (id, plan_id, idx, kind, symbol, amount_spec, amount_lamports, state, attempts, request,
                        response_status, response_raw, error, resolution, created_at, updated_at)
  SELECT id, plan_id, idx, kind, symbol, amount_spec, amount_lamports, state, attempts, request,
         response_status, response_raw, error, resolution, created_at, updated_at
  FROM steps;
  DROP TABLE steps;
  ALTER TABLE steps_v2 RENAME TO steps;
  CREATE INDEX steps_by_state ON steps (state);

  CREATE TABLE attempts_v2 (
    id          INTEGER PRIMARY KEY,
    step_id     INTEGER NOT NULL REFERENCES steps (id),
    n           INTEGER NOT NULL,
    request     TEXT,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    outcome     TEXT    CHECK (outcome IS NULL OR outcome IN ('acknowledged', 'rejected', 'failed', 'unknown', 'not_sent')),
    status      INTEGER,
    request_id  TEXT,
    error       TEXT,
    UNIQUE (step_id, n)
  ) STRICT;
  INSERT INTO attempts_v2 (id, step_id, n, request, started_at, finished_at, outcome, status, error)
  SELECT id, step_id, n, request, started_at, finished_at, outcome, status, error FROM attempts;
  DROP TABLE attempts;
  ALTER TABLE attempts_v2 RENAME TO attempts;

  CREATE TABLE epochs_seen_v2 (
    address       TEXT    NOT NULL,
    epoch         TEXT    NOT NULL,
    first_seen_at INTEGER NOT NULL,
    PRIMARY KEY (address, epoch)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO epochs_seen_v2 (address, epoch, first_seen_at)
  SELECT n.address, e.epoch, MIN(e.first_seen_at)
  FROM epochs_seen e
  JOIN (SELECT wallet, address FROM wallet_state UNION SELECT wallet, address FROM plans) n ON n.wallet = e.wallet
  GROUP BY n.address, e.epoch;
  DROP TABLE epochs_seen;
  ALTER TABLE epochs_seen_v2 RENAME TO epochs_seen;

  CREATE TABLE wallet_state_v2 (
    address           TEXT    PRIMARY KEY,
    wallet            TEXT    NOT NULL,
    last_poll_at      INTEGER NOT NULL,
    last_ok_at        INTEGER,
    last_error        TEXT,
    epoch             TEXT,
    pending_lamports  TEXT    CHECK ${LAMPORTS('pending_lamports')},
    lifetime_lamports TEXT    CHECK ${LAMPORTS('lifetime_lamports')},
    rank              INTEGER,
    tier              TEXT,
    summary_raw       TEXT,
    updated_at        INTEGER NOT NULL
  ) STRICT;
  INSERT INTO wallet_state_v2 (address, wallet, last_poll_at, last_ok_at, last_error, epoch, pending_lamports,
                               lifetime_lamports, rank, tier, summary_raw, updated_at)
  SELECT address, wallet, last_poll_at, last_ok_at, last_error, epoch, pending_lamports,
         lifetime_lamports, rank, tier, summary_raw, updated_at
  FROM (SELECT w.*, ROW_NUMBER() OVER (PARTITION BY address ORDER BY updated_at DESC, wallet) AS rn FROM wallet_state w)
  WHERE rn = 1;
  DROP TABLE wallet_state;
  ALTER TABLE wallet_state_v2 RENAME TO wallet_state;
  `,
  // 3: `autoclaim send --cancel --id ID` records who cancelled a queued one-off plan, and when (issue
  // 24). Columns added in place: no table is rebuilt, so nothing another migration added is lost.
  `
  ALTER TABLE plans ADD COLUMN cancelled_at INTEGER;
  ALTER TABLE plans ADD COLUMN cancelled_by TEXT;
  `,
  // 4: the outbox. A failure notice is kept here until its receiver took it or it expired, so a
  // receiver down for a while, or a restart, loses nothing (service/outbox.ts). The body is the
  // notice's JSON, redacted before it is written. claimed_until is a delivery in progress: another
  // reader skips the row until then, and a crash's claim lapses by itself.
  `
  CREATE TABLE outbox (
    id            INTEGER PRIMARY KEY,
    channel       TEXT    NOT NULL,
    key           TEXT    NOT NULL,
    body          TEXT    NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_at       INTEGER NOT NULL,
    claimed_until INTEGER,
    expires_at    INTEGER NOT NULL,
    last_error    TEXT,
    created_at    INTEGER NOT NULL,
    UNIQUE (channel, key)
  ) STRICT;
  CREATE INDEX outbox_due ON outbox (channel, next_at);
  `,
  // 5: reads that stay as cheap in a year as on the first day (docs/reliability.md, "Months of
  // running review"). A turn's history (codecs.ts historyPlanIds) takes the plans of its epoch and
  // those updated in its window from an index each, instead of reading every plan the address
  // ever had; latestRulePlans (every start and reload) skips along the rule index instead of
  // reading the whole table. And the newest signed ts of each address (lastRequestTs, before every
  // signature) is one row of signed_ts, a running maximum kept by triggers on attempts (every write
  // of a request goes through them), instead of a json_extract of every attempt the address ever
  // made; filled here from the attempts there are. A request that is not JSON is left out (the
  // read it replaces threw on it).
  `
  CREATE TABLE signed_ts (
    address TEXT    PRIMARY KEY,
    ts      INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO signed_ts (address, ts)
  SELECT p.address, MAX(json_extract(a.request, '$.ts'))
  FROM attempts a JOIN steps s ON s.id = a.step_id JOIN plans p ON p.id = s.plan_id
  WHERE json_valid(a.request) AND json_extract(a.request, '$.ts') IS NOT NULL
  GROUP BY p.address;
  CREATE TRIGGER attempts_signed_ts_insert AFTER INSERT ON attempts
  WHEN json_extract(CASE WHEN json_valid(NEW.request) THEN NEW.request END, '$.ts') IS NOT NULL
  BEGIN
    INSERT INTO signed_ts (address, ts)
    SELECT p.address, json_extract(NEW.request, '$.ts') FROM steps s JOIN plans p ON p.id = s.plan_id WHERE s.id = NEW.step_id
    ON CONFLICT (address) DO UPDATE SET ts = MAX(ts, excluded.ts);
  END;
  CREATE TRIGGER attempts_signed_ts_update AFTER UPDATE OF request ON attempts
  WHEN json_extract(CASE WHEN json_valid(NEW.request) THEN NEW.request END, '$.ts') IS NOT NULL
  BEGIN
    INSERT INTO signed_ts (address, ts)
    SELECT p.address, json_extract(NEW.request, '$.ts') FROM steps s JOIN plans p ON p.id = s.plan_id WHERE s.id = NEW.step_id
    ON CONFLICT (address) DO UPDATE SET ts = MAX(ts, excluded.ts);
  END;
  CREATE INDEX plans_by_address_epoch ON plans (address, epoch);
  CREATE INDEX plans_by_address_updated ON plans (address, updated_at);
  CREATE INDEX plans_by_rule ON plans (rule, id);
  CREATE INDEX plans_active ON plans (address) WHERE status IN ('open', 'blocked');
  `,
  // 6: whether a plan's claimed amount is proved (plans.claimed_proved), so a step sized from the
  // claim ("N%", "all") is sized only from the answer's claimed_sol or lifetime's rise. A release
  // before it recorded the pending seen as the claimed amount of a claim answered without
  // claimed_sol; a plan it left half-way (stopped between its claim and its deposit) keeps 0 here,
  // and its share steps are skipped (claim_unproved) rather than paid for from the wallet's balance.
  `
  ALTER TABLE plans ADD COLUMN claimed_proved INTEGER NOT NULL DEFAULT 0 CHECK (claimed_proved IN (0, 1));
  `,
];

/** The user_version a fully migrated database has. */
export const SCHEMA_VERSION = MIGRATIONS.length;
