-- protocol_stats, protocol_users, address_stats and stat_counters (see schema.ts and docs/performance.md),
-- kept by statement-level triggers with transition tables: a few aggregated statements per written
-- statement, whoever writes (commitBatch, removeBlocks, a bench seeding rows directly), and exact on reorg
-- rollback because deletes fire them too. A distinct set (protocol users, addresses) grows by the keys an
-- `INSERT … ON CONFLICT DO NOTHING` creates and shrinks by the keys whose count falls to zero; rows are
-- written in key order so that concurrent writers lock them in one order.
CREATE FUNCTION protocol_stats_count_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO protocol_users AS u (protocol, address, transaction_count)
      SELECT protocol, from_address, -count(*) FROM protocol_stats_old_rows
      GROUP BY protocol, from_address ORDER BY protocol, from_address
    ON CONFLICT (protocol, address) DO UPDATE SET transaction_count = u.transaction_count + excluded.transaction_count;
    WITH gone AS (
      DELETE FROM protocol_users AS u USING (SELECT DISTINCT protocol, from_address FROM protocol_stats_old_rows) o
      WHERE u.protocol = o.protocol AND u.address = o.from_address AND u.transaction_count <= 0
      RETURNING u.protocol
    )
    INSERT INTO protocol_stats AS s (protocol, transaction_count, unique_users, updated_at)
      SELECT r.protocol, -r.n, -coalesce(g.n, 0), now()
      FROM (SELECT protocol, count(*) AS n FROM protocol_stats_old_rows GROUP BY protocol) r
      LEFT JOIN (SELECT protocol, count(*) AS n FROM gone GROUP BY protocol) g USING (protocol)
      ORDER BY r.protocol
    ON CONFLICT (protocol) DO UPDATE SET transaction_count = s.transaction_count + excluded.transaction_count,
      unique_users = s.unique_users + excluded.unique_users, updated_at = excluded.updated_at;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    WITH created AS (
      INSERT INTO protocol_users (protocol, address, transaction_count)
        SELECT DISTINCT protocol, from_address, 0 FROM protocol_stats_new_rows ORDER BY protocol, from_address
      ON CONFLICT (protocol, address) DO NOTHING
      RETURNING protocol
    )
    INSERT INTO protocol_stats AS s (protocol, transaction_count, unique_users, updated_at)
      SELECT a.protocol, a.n, coalesce(c.n, 0), now()
      FROM (SELECT protocol, count(*) AS n FROM protocol_stats_new_rows GROUP BY protocol) a
      LEFT JOIN (SELECT protocol, count(*) AS n FROM created GROUP BY protocol) c USING (protocol)
      ORDER BY a.protocol
    ON CONFLICT (protocol) DO UPDATE SET transaction_count = s.transaction_count + excluded.transaction_count,
      unique_users = s.unique_users + excluded.unique_users, updated_at = excluded.updated_at;
    INSERT INTO protocol_users AS u (protocol, address, transaction_count)
      SELECT protocol, from_address, count(*) FROM protocol_stats_new_rows
      GROUP BY protocol, from_address ORDER BY protocol, from_address
    ON CONFLICT (protocol, address) DO UPDATE SET transaction_count = u.transaction_count + excluded.transaction_count;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER transactions_stats_insert AFTER INSERT ON transactions
  REFERENCING NEW TABLE AS protocol_stats_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION protocol_stats_count_transactions();
--> statement-breakpoint
CREATE TRIGGER transactions_stats_update AFTER UPDATE ON transactions
  REFERENCING OLD TABLE AS protocol_stats_old_rows NEW TABLE AS protocol_stats_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION protocol_stats_count_transactions();
--> statement-breakpoint
CREATE TRIGGER transactions_stats_delete AFTER DELETE ON transactions
  REFERENCING OLD TABLE AS protocol_stats_old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION protocol_stats_count_transactions();
--> statement-breakpoint
CREATE FUNCTION address_stats_count_parties() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO address_stats AS a (address, transaction_count)
      SELECT address, -count(*) FROM address_stats_old_rows GROUP BY address ORDER BY address
    ON CONFLICT (address) DO UPDATE SET transaction_count = a.transaction_count + excluded.transaction_count;
    WITH gone AS (
      DELETE FROM address_stats AS a USING (SELECT DISTINCT address FROM address_stats_old_rows) o
      WHERE a.address = o.address AND a.transaction_count <= 0
      RETURNING a.address
    )
    INSERT INTO stat_counters AS c (name, value) SELECT 'addresses', -count(*) FROM gone
    ON CONFLICT (name) DO UPDATE SET value = c.value + excluded.value;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    WITH created AS (
      INSERT INTO address_stats (address, transaction_count)
        SELECT DISTINCT address, 0 FROM address_stats_new_rows ORDER BY address
      ON CONFLICT (address) DO NOTHING
      RETURNING address
    )
    INSERT INTO stat_counters AS c (name, value) SELECT 'addresses', count(*) FROM created
    ON CONFLICT (name) DO UPDATE SET value = c.value + excluded.value;
    INSERT INTO address_stats AS a (address, transaction_count)
      SELECT address, count(*) FROM address_stats_new_rows GROUP BY address ORDER BY address
    ON CONFLICT (address) DO UPDATE SET transaction_count = a.transaction_count + excluded.transaction_count;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER address_transactions_stats_insert AFTER INSERT ON address_transactions
  REFERENCING NEW TABLE AS address_stats_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION address_stats_count_parties();
--> statement-breakpoint
CREATE TRIGGER address_transactions_stats_update AFTER UPDATE ON address_transactions
  REFERENCING OLD TABLE AS address_stats_old_rows NEW TABLE AS address_stats_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION address_stats_count_parties();
--> statement-breakpoint
CREATE TRIGGER address_transactions_stats_delete AFTER DELETE ON address_transactions
  REFERENCING OLD TABLE AS address_stats_old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION address_stats_count_parties();
--> statement-breakpoint
-- TRUNCATE fires no DELETE triggers: it empties the aggregates itself.
CREATE FUNCTION protocol_stats_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'transactions' THEN
    DELETE FROM protocol_users;
    UPDATE protocol_stats SET transaction_count = 0, unique_users = 0, updated_at = now();
  ELSE
    DELETE FROM address_stats;
    UPDATE stat_counters SET value = 0 WHERE name = 'addresses';
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER transactions_stats_truncate AFTER TRUNCATE ON transactions
  FOR EACH STATEMENT EXECUTE FUNCTION protocol_stats_reset();
--> statement-breakpoint
CREATE TRIGGER address_transactions_stats_truncate AFTER TRUNCATE ON address_transactions
  FOR EACH STATEMENT EXECUTE FUNCTION protocol_stats_reset();
--> statement-breakpoint
-- Databases migrated with data already in them start from an exact count.
INSERT INTO protocol_users (protocol, address, transaction_count)
  SELECT protocol, from_address, count(*) FROM transactions GROUP BY protocol, from_address
ON CONFLICT (protocol, address) DO UPDATE SET transaction_count = excluded.transaction_count;
--> statement-breakpoint
INSERT INTO protocol_stats (protocol, transaction_count, unique_users, updated_at)
  SELECT protocol, count(*), count(DISTINCT from_address), now() FROM transactions GROUP BY protocol
ON CONFLICT (protocol) DO UPDATE
  SET transaction_count = excluded.transaction_count, unique_users = excluded.unique_users;
--> statement-breakpoint
INSERT INTO address_stats (address, transaction_count)
  SELECT address, count(*) FROM address_transactions GROUP BY address
ON CONFLICT (address) DO UPDATE SET transaction_count = excluded.transaction_count;
--> statement-breakpoint
INSERT INTO stat_counters (name, value) SELECT 'addresses', count(*) FROM address_stats
ON CONFLICT (name) DO UPDATE SET value = excluded.value;
