-- token_stats counters (see schema.ts `tokenStats` and docs/performance.md, "API indexes"), kept by
-- statement-level triggers with transition tables: one aggregated upsert per statement, whoever writes
-- (commitBatch, removeBlocks, applyDeltas, upsertReadings, a bench seeding rows directly) and exact on
-- rollback because deletes and balance updates fire them too. Rows are upserted in token_address order so
-- that concurrent writers lock counter rows in one order.
CREATE FUNCTION token_stats_count_transfers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO token_stats AS s (token_address, transfers_count)
      SELECT token_address, count(*) FROM token_stats_new_rows GROUP BY token_address ORDER BY token_address
    ON CONFLICT (token_address) DO UPDATE SET transfers_count = s.transfers_count + excluded.transfers_count;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO token_stats AS s (token_address, transfers_count)
      SELECT token_address, -count(*) FROM token_stats_old_rows GROUP BY token_address ORDER BY token_address
    ON CONFLICT (token_address) DO UPDATE SET transfers_count = s.transfers_count + excluded.transfers_count;
  ELSE
    INSERT INTO token_stats AS s (token_address, transfers_count)
      SELECT token_address, sum(n) FROM (
        SELECT token_address, 1 AS n FROM token_stats_new_rows
        UNION ALL SELECT token_address, -1 AS n FROM token_stats_old_rows
      ) d GROUP BY token_address HAVING sum(n) <> 0 ORDER BY token_address
    ON CONFLICT (token_address) DO UPDATE SET transfers_count = s.transfers_count + excluded.transfers_count;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER token_transfers_stats_insert AFTER INSERT ON token_transfers
  REFERENCING NEW TABLE AS token_stats_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION token_stats_count_transfers();
--> statement-breakpoint
CREATE TRIGGER token_transfers_stats_update AFTER UPDATE ON token_transfers
  REFERENCING OLD TABLE AS token_stats_old_rows NEW TABLE AS token_stats_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION token_stats_count_transfers();
--> statement-breakpoint
CREATE TRIGGER token_transfers_stats_delete AFTER DELETE ON token_transfers
  REFERENCING OLD TABLE AS token_stats_old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION token_stats_count_transfers();
--> statement-breakpoint
CREATE FUNCTION token_stats_count_holders() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO token_stats AS s (token_address, holders_count)
      SELECT token_address, count(*) FROM token_stats_new_rows WHERE balance > 0
      GROUP BY token_address ORDER BY token_address
    ON CONFLICT (token_address) DO UPDATE SET holders_count = s.holders_count + excluded.holders_count;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO token_stats AS s (token_address, holders_count)
      SELECT token_address, -count(*) FROM token_stats_old_rows WHERE balance > 0
      GROUP BY token_address ORDER BY token_address
    ON CONFLICT (token_address) DO UPDATE SET holders_count = s.holders_count + excluded.holders_count;
  ELSE
    INSERT INTO token_stats AS s (token_address, holders_count)
      SELECT token_address, sum(n) FROM (
        SELECT token_address, 1 AS n FROM token_stats_new_rows WHERE balance > 0
        UNION ALL SELECT token_address, -1 AS n FROM token_stats_old_rows WHERE balance > 0
      ) d GROUP BY token_address HAVING sum(n) <> 0 ORDER BY token_address
    ON CONFLICT (token_address) DO UPDATE SET holders_count = s.holders_count + excluded.holders_count;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER token_balances_stats_insert AFTER INSERT ON token_balances
  REFERENCING NEW TABLE AS token_stats_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION token_stats_count_holders();
--> statement-breakpoint
CREATE TRIGGER token_balances_stats_update AFTER UPDATE ON token_balances
  REFERENCING OLD TABLE AS token_stats_old_rows NEW TABLE AS token_stats_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION token_stats_count_holders();
--> statement-breakpoint
CREATE TRIGGER token_balances_stats_delete AFTER DELETE ON token_balances
  REFERENCING OLD TABLE AS token_stats_old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION token_stats_count_holders();
--> statement-breakpoint
-- TRUNCATE fires no row or statement DELETE triggers: it empties the counters itself.
CREATE FUNCTION token_stats_reset() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'token_transfers' THEN
    UPDATE token_stats SET transfers_count = 0 WHERE transfers_count <> 0;
  ELSE
    UPDATE token_stats SET holders_count = 0 WHERE holders_count <> 0;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER token_transfers_stats_truncate AFTER TRUNCATE ON token_transfers
  FOR EACH STATEMENT EXECUTE FUNCTION token_stats_reset();
--> statement-breakpoint
CREATE TRIGGER token_balances_stats_truncate AFTER TRUNCATE ON token_balances
  FOR EACH STATEMENT EXECUTE FUNCTION token_stats_reset();
--> statement-breakpoint
-- Databases migrated with data already in them start from an exact count.
INSERT INTO token_stats (token_address, transfers_count, holders_count)
  SELECT token_address, sum(transfers), sum(holders) FROM (
    SELECT token_address, count(*) AS transfers, 0 AS holders FROM token_transfers GROUP BY token_address
    UNION ALL
    SELECT token_address, 0 AS transfers, count(*) AS holders FROM token_balances WHERE balance > 0
    GROUP BY token_address
  ) c GROUP BY token_address
ON CONFLICT (token_address) DO UPDATE
  SET transfers_count = excluded.transfers_count, holders_count = excluded.holders_count;
