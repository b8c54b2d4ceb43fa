CREATE TABLE "history_buckets" (
	"span" text NOT NULL,
	"protocol" text NOT NULL,
	"bucket" timestamp (3) with time zone NOT NULL,
	"transaction_count" bigint DEFAULT 0 NOT NULL,
	"unique_users" bigint DEFAULT 0 NOT NULL,
	"revision" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "history_buckets_pk" PRIMARY KEY("span","protocol","bucket")
);
--> statement-breakpoint
CREATE TABLE "history_holder_hours" (
	"token_address" text NOT NULL,
	"holder" text NOT NULL,
	"hour" timestamp (3) with time zone NOT NULL,
	"delta" numeric(78, 0) NOT NULL,
	CONSTRAINT "history_holder_hours_pk" PRIMARY KEY("holder","token_address","hour")
);
--> statement-breakpoint
CREATE TABLE "history_holders" (
	"address" text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE TABLE "history_users" (
	"span" text NOT NULL,
	"protocol" text NOT NULL,
	"bucket" timestamp (3) with time zone NOT NULL,
	"address" text NOT NULL,
	"transaction_count" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "history_users_pk" PRIMARY KEY("span","protocol","bucket","address")
);
--> statement-breakpoint
CREATE TABLE "history_volumes" (
	"span" text NOT NULL,
	"protocol" text NOT NULL,
	"bucket" timestamp (3) with time zone NOT NULL,
	"revision" bigint NOT NULL,
	"config_hash" text NOT NULL,
	"volume_usd" double precision NOT NULL,
	CONSTRAINT "history_volumes_pk" PRIMARY KEY("span","protocol","bucket")
);
--> statement-breakpoint
-- History roll-ups (SPEC §10.3, docs/api.md "History"): history_buckets / history_users follow transactions
-- and history_holder_hours follows token_transfers, through statement-level triggers with transition tables
-- (as 0004, 0008, 0012): a few aggregated statements per written statement, exact whoever writes (ingest,
-- reorg rollback, a bench seeding rows) and through crash and replay (they commit with the rows). Each
-- transaction counts in four buckets: its hour and its day, for its protocol and for all ('').
-- A distinct set grows as in 0012 (a key counts as created when its count after the upsert is what this
-- statement added) and shrinks as in 0004 (keys whose count falls to zero are deleted); rows are written in
-- key order so that concurrent writers lock them in one order.
CREATE SEQUENCE history_revision_seq;
--> statement-breakpoint
-- Every bucket that ends after `since` gets a new revision: its cached USD volume (history_volumes) is computed
-- again when next read. Called for a change of transactions or transfers at `since`, which may move a price
-- (a pool's Sync) at every later time, and by whatever changes price history at `since`.
CREATE FUNCTION history_invalidate_volumes(since timestamptz) RETURNS void LANGUAGE sql AS $$
  UPDATE history_buckets AS b SET revision = nextval('history_revision_seq')
  FROM (
    SELECT span, protocol, bucket FROM history_buckets
    WHERE since IS NOT NULL AND ((span = 'hour' AND bucket >= date_trunc('hour', since, 'UTC'))
      OR (span = 'day' AND bucket >= date_trunc('day', since, 'UTC')))
    ORDER BY span, protocol, bucket FOR UPDATE
  ) o
  WHERE b.span = o.span AND b.protocol = o.protocol AND b.bucket = o.bucket;
$$;
--> statement-breakpoint
CREATE FUNCTION history_count_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO history_users AS u (span, protocol, bucket, address, transaction_count)
      SELECT k.span, k.protocol, k.bucket, r.from_address, -count(*)
      FROM history_old_rows r CROSS JOIN LATERAL (VALUES
        ('hour', r.protocol, date_trunc('hour', r.block_timestamp, 'UTC')),
        ('hour', '', date_trunc('hour', r.block_timestamp, 'UTC')),
        ('day', r.protocol, date_trunc('day', r.block_timestamp, 'UTC')),
        ('day', '', date_trunc('day', r.block_timestamp, 'UTC'))) AS k(span, protocol, bucket)
      GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (span, protocol, bucket, address) DO UPDATE
      SET transaction_count = u.transaction_count + excluded.transaction_count;
    WITH keys AS (
      SELECT DISTINCT k.span, k.protocol, k.bucket, r.from_address AS address
      FROM history_old_rows r CROSS JOIN LATERAL (VALUES
        ('hour', r.protocol, date_trunc('hour', r.block_timestamp, 'UTC')),
        ('hour', '', date_trunc('hour', r.block_timestamp, 'UTC')),
        ('day', r.protocol, date_trunc('day', r.block_timestamp, 'UTC')),
        ('day', '', date_trunc('day', r.block_timestamp, 'UTC'))) AS k(span, protocol, bucket)
    ), removed AS (
      SELECT k.span, k.protocol, k.bucket, count(*) AS n FROM history_old_rows r CROSS JOIN LATERAL (VALUES
        ('hour', r.protocol, date_trunc('hour', r.block_timestamp, 'UTC')),
        ('hour', '', date_trunc('hour', r.block_timestamp, 'UTC')),
        ('day', r.protocol, date_trunc('day', r.block_timestamp, 'UTC')),
        ('day', '', date_trunc('day', r.block_timestamp, 'UTC'))) AS k(span, protocol, bucket)
      GROUP BY 1, 2, 3
    ), gone AS (
      DELETE FROM history_users AS u USING keys o
      WHERE u.span = o.span AND u.protocol = o.protocol AND u.bucket = o.bucket AND u.address = o.address
        AND u.transaction_count <= 0
      RETURNING u.span, u.protocol, u.bucket
    )
    INSERT INTO history_buckets AS b (span, protocol, bucket, transaction_count, unique_users)
      SELECT r.span, r.protocol, r.bucket, -r.n, -coalesce(g.n, 0)
      FROM removed r
      LEFT JOIN (SELECT span, protocol, bucket, count(*) AS n FROM gone GROUP BY 1, 2, 3) g
        USING (span, protocol, bucket)
      ORDER BY 1, 2, 3
    ON CONFLICT (span, protocol, bucket) DO UPDATE
      SET transaction_count = b.transaction_count + excluded.transaction_count,
        unique_users = b.unique_users + excluded.unique_users;
    PERFORM history_invalidate_volumes((SELECT min(block_timestamp) FROM history_old_rows));
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    WITH added AS (
      SELECT k.span, k.protocol, k.bucket, r.from_address AS address, count(*) AS n
      FROM history_new_rows r CROSS JOIN LATERAL (VALUES
        ('hour', r.protocol, date_trunc('hour', r.block_timestamp, 'UTC')),
        ('hour', '', date_trunc('hour', r.block_timestamp, 'UTC')),
        ('day', r.protocol, date_trunc('day', r.block_timestamp, 'UTC')),
        ('day', '', date_trunc('day', r.block_timestamp, 'UTC'))) AS k(span, protocol, bucket)
      GROUP BY 1, 2, 3, 4
    ), upserted AS (
      INSERT INTO history_users AS u (span, protocol, bucket, address, transaction_count)
        SELECT span, protocol, bucket, address, n FROM added ORDER BY 1, 2, 3, 4
      ON CONFLICT (span, protocol, bucket, address) DO UPDATE
        SET transaction_count = u.transaction_count + excluded.transaction_count
      RETURNING u.span, u.protocol, u.bucket, u.address, u.transaction_count
    )
    INSERT INTO history_buckets AS b (span, protocol, bucket, transaction_count, unique_users)
      SELECT a.span, a.protocol, a.bucket, sum(a.n)::bigint, count(*) FILTER (WHERE up.transaction_count = a.n)
      FROM added a JOIN upserted up USING (span, protocol, bucket, address)
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (span, protocol, bucket) DO UPDATE
      SET transaction_count = b.transaction_count + excluded.transaction_count,
        unique_users = b.unique_users + excluded.unique_users;
    PERFORM history_invalidate_volumes((SELECT min(block_timestamp) FROM history_new_rows));
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER transactions_history_insert AFTER INSERT ON transactions
  REFERENCING NEW TABLE AS history_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION history_count_transactions();
--> statement-breakpoint
CREATE TRIGGER transactions_history_update AFTER UPDATE ON transactions
  REFERENCING OLD TABLE AS history_old_rows NEW TABLE AS history_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION history_count_transactions();
--> statement-breakpoint
CREATE TRIGGER transactions_history_delete AFTER DELETE ON transactions
  REFERENCING OLD TABLE AS history_old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION history_count_transactions();
--> statement-breakpoint
-- Followed holders only (history_holders: the protocols' tvlAddresses): a transfer moves `amount` out of its
-- sender and into its recipient; a self-transfer nets zero.
CREATE FUNCTION history_follow_transfers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO history_holder_hours AS h (holder, token_address, hour, delta)
      SELECT holder, token_address, hour, sum(d) FROM (
        SELECT to_address AS holder, token_address, date_trunc('hour', block_timestamp, 'UTC') AS hour, -amount AS d
        FROM history_transfer_old_rows
        UNION ALL
        SELECT from_address, token_address, date_trunc('hour', block_timestamp, 'UTC'), amount
        FROM history_transfer_old_rows
      ) x WHERE holder IN (SELECT address FROM history_holders)
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (holder, token_address, hour) DO UPDATE SET delta = h.delta + excluded.delta;
    PERFORM history_invalidate_volumes((SELECT min(block_timestamp) FROM history_transfer_old_rows));
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO history_holder_hours AS h (holder, token_address, hour, delta)
      SELECT holder, token_address, hour, sum(d) FROM (
        SELECT to_address AS holder, token_address, date_trunc('hour', block_timestamp, 'UTC') AS hour, amount AS d
        FROM history_transfer_new_rows
        UNION ALL
        SELECT from_address, token_address, date_trunc('hour', block_timestamp, 'UTC'), -amount
        FROM history_transfer_new_rows
      ) x WHERE holder IN (SELECT address FROM history_holders)
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (holder, token_address, hour) DO UPDATE SET delta = h.delta + excluded.delta;
    PERFORM history_invalidate_volumes((SELECT min(block_timestamp) FROM history_transfer_new_rows));
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER token_transfers_history_insert AFTER INSERT ON token_transfers
  REFERENCING NEW TABLE AS history_transfer_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION history_follow_transfers();
--> statement-breakpoint
CREATE TRIGGER token_transfers_history_update AFTER UPDATE ON token_transfers
  REFERENCING OLD TABLE AS history_transfer_old_rows NEW TABLE AS history_transfer_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION history_follow_transfers();
--> statement-breakpoint
CREATE TRIGGER token_transfers_history_delete AFTER DELETE ON token_transfers
  REFERENCING OLD TABLE AS history_transfer_old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION history_follow_transfers();
--> statement-breakpoint
-- TRUNCATE fires no DELETE triggers: it empties the roll-ups itself.
CREATE FUNCTION history_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'transactions' THEN
    DELETE FROM history_users;
    DELETE FROM history_buckets;
  ELSE
    DELETE FROM history_holder_hours;
  END IF;
  DELETE FROM history_volumes;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER transactions_history_truncate AFTER TRUNCATE ON transactions
  FOR EACH STATEMENT EXECUTE FUNCTION history_reset();
--> statement-breakpoint
CREATE TRIGGER token_transfers_history_truncate AFTER TRUNCATE ON token_transfers
  FOR EACH STATEMENT EXECUTE FUNCTION history_reset();
--> statement-breakpoint
-- Databases migrated with data already in them start from exact roll-ups (followed holders are added, with
-- their hours, from the configuration when protoscan starts).
INSERT INTO history_users (span, protocol, bucket, address, transaction_count)
  SELECT k.span, k.protocol, k.bucket, t.from_address, count(*)
  FROM transactions t CROSS JOIN LATERAL (VALUES
    ('hour', t.protocol, date_trunc('hour', t.block_timestamp, 'UTC')),
    ('hour', '', date_trunc('hour', t.block_timestamp, 'UTC')),
    ('day', t.protocol, date_trunc('day', t.block_timestamp, 'UTC')),
    ('day', '', date_trunc('day', t.block_timestamp, 'UTC'))) AS k(span, protocol, bucket)
  GROUP BY 1, 2, 3, 4;
--> statement-breakpoint
INSERT INTO history_buckets (span, protocol, bucket, transaction_count, unique_users, revision)
  SELECT span, protocol, bucket, sum(transaction_count)::bigint, count(*), nextval('history_revision_seq')
  FROM history_users GROUP BY 1, 2, 3;
--> statement-breakpoint
-- A change of price history at time t (a price recorded, an api backfill arriving, SPEC §10.1) may move the
-- value of any transfer at or after t: every bucket ending after it computes its volume again when next read.
CREATE FUNCTION history_follow_prices() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM history_invalidate_volumes('-infinity');
    RETURN NULL;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    PERFORM history_invalidate_volumes((SELECT min(time) FROM history_price_old_rows));
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    PERFORM history_invalidate_volumes((SELECT min(time) FROM history_price_new_rows));
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER price_history_history_insert AFTER INSERT ON price_history
  REFERENCING NEW TABLE AS history_price_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION history_follow_prices();
--> statement-breakpoint
CREATE TRIGGER price_history_history_update AFTER UPDATE ON price_history
  REFERENCING OLD TABLE AS history_price_old_rows NEW TABLE AS history_price_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION history_follow_prices();
--> statement-breakpoint
CREATE TRIGGER price_history_history_delete AFTER DELETE ON price_history
  REFERENCING OLD TABLE AS history_price_old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION history_follow_prices();
--> statement-breakpoint
CREATE TRIGGER price_history_history_truncate AFTER TRUNCATE ON price_history
  FOR EACH STATEMENT EXECUTE FUNCTION history_follow_prices();
