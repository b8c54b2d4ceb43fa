-- transaction_volumes follows transactions, and protocol_volume_hours follows transaction_volumes, through
-- statement-level triggers with transition tables (as in 0002 and 0004): exact whoever writes (ingest, reorg
-- rollback, direct writes), a few aggregated statements per written statement, rows in key order so that
-- concurrent writers lock them in one order. See docs/prices.md ("Statistics").
--
-- Only transactions whose block time is within 25 hours of the database clock get a row: the trailing-24-hours
-- window ends at the later of the clock and the newest block, so an older transaction can never be in it
-- (a backfill of history writes nothing here). The USD statistics value the rows and prune the old ones.
CREATE FUNCTION transaction_volumes_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM transaction_volumes AS v USING (SELECT hash FROM transaction_volumes_old_rows ORDER BY hash) o
    WHERE v.tx_hash = o.hash;
  ELSIF TG_OP = 'UPDATE' THEN
    -- A transaction re-attributed or moved to another block time is valued again.
    UPDATE transaction_volumes AS v
    SET protocol = n.protocol, block_timestamp = n.block_timestamp, volume_usd = NULL, config_hash = NULL,
      valued_at = NULL
    FROM transaction_volumes_new_rows n
    WHERE v.tx_hash = n.hash AND (v.protocol <> n.protocol OR v.block_timestamp <> n.block_timestamp);
  ELSE
    INSERT INTO transaction_volumes (tx_hash, protocol, block_timestamp)
      SELECT hash, protocol, block_timestamp FROM transaction_volumes_new_rows
      WHERE block_timestamp >= now() - interval '25 hours' ORDER BY hash
    ON CONFLICT (tx_hash) DO NOTHING;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER transactions_volumes_insert AFTER INSERT ON transactions
  REFERENCING NEW TABLE AS transaction_volumes_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION transaction_volumes_follow();
--> statement-breakpoint
CREATE TRIGGER transactions_volumes_update AFTER UPDATE ON transactions
  REFERENCING OLD TABLE AS transaction_volumes_old_rows NEW TABLE AS transaction_volumes_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION transaction_volumes_follow();
--> statement-breakpoint
CREATE TRIGGER transactions_volumes_delete AFTER DELETE ON transactions
  REFERENCING OLD TABLE AS transaction_volumes_old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION transaction_volumes_follow();
--> statement-breakpoint
CREATE FUNCTION protocol_volume_hours_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO protocol_volume_hours AS h (protocol, hour, transactions, volume_usd)
      SELECT protocol, date_trunc('hour', block_timestamp, 'UTC'), -count(*),
        -coalesce(sum(volume_usd::numeric), 0)
      FROM protocol_volume_old_rows GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (protocol, hour) DO UPDATE SET transactions = h.transactions + excluded.transactions,
      volume_usd = h.volume_usd + excluded.volume_usd;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO protocol_volume_hours AS h (protocol, hour, transactions, volume_usd)
      SELECT protocol, date_trunc('hour', block_timestamp, 'UTC'), count(*),
        coalesce(sum(volume_usd::numeric), 0)
      FROM protocol_volume_new_rows GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (protocol, hour) DO UPDATE SET transactions = h.transactions + excluded.transactions,
      volume_usd = h.volume_usd + excluded.volume_usd;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    DELETE FROM protocol_volume_hours AS h
    USING (SELECT DISTINCT protocol, date_trunc('hour', block_timestamp, 'UTC') AS hour FROM protocol_volume_old_rows) o
    WHERE h.protocol = o.protocol AND h.hour = o.hour AND h.transactions <= 0;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER transaction_volumes_hours_insert AFTER INSERT ON transaction_volumes
  REFERENCING NEW TABLE AS protocol_volume_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION protocol_volume_hours_count();
--> statement-breakpoint
CREATE TRIGGER transaction_volumes_hours_update AFTER UPDATE ON transaction_volumes
  REFERENCING OLD TABLE AS protocol_volume_old_rows NEW TABLE AS protocol_volume_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION protocol_volume_hours_count();
--> statement-breakpoint
CREATE TRIGGER transaction_volumes_hours_delete AFTER DELETE ON transaction_volumes
  REFERENCING OLD TABLE AS protocol_volume_old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION protocol_volume_hours_count();
--> statement-breakpoint
-- TRUNCATE fires no DELETE triggers: it empties the followers itself.
CREATE FUNCTION transaction_volumes_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'transactions' THEN
    TRUNCATE transaction_volumes;
  END IF;
  TRUNCATE protocol_volume_hours;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER transactions_volumes_truncate AFTER TRUNCATE ON transactions
  FOR EACH STATEMENT EXECUTE FUNCTION transaction_volumes_reset();
--> statement-breakpoint
CREATE TRIGGER transaction_volumes_hours_truncate AFTER TRUNCATE ON transaction_volumes
  FOR EACH STATEMENT EXECUTE FUNCTION transaction_volumes_reset();
--> statement-breakpoint
-- Databases migrated with data already in them: the recent transactions, to be valued.
INSERT INTO transaction_volumes (tx_hash, protocol, block_timestamp)
  SELECT hash, protocol, block_timestamp FROM transactions WHERE block_timestamp >= now() - interval '25 hours'
  ORDER BY hash
ON CONFLICT (tx_hash) DO NOTHING;
