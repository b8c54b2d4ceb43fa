-- Change notices for the read API's caches (src/store/changeNotices.ts, src/api/createEventCache.ts): every
-- statement that writes token_balances or indexer_cursor NOTIFYs protoscan_changes with the table's name.
-- PostgreSQL delivers it when (and only if) the transaction commits, and folds repeats within a transaction
-- into one, so a commit costs one notice per table it touched. Triggers, like the counters of 0002-0008,
-- so that every write path is heard: ingest, rollback, call-mode balance refreshes (which store no
-- transaction and so announce nothing on the ingest events), the cursor moving over empty blocks, seeding.
CREATE FUNCTION protoscan_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('protoscan_changes', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER token_balances_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON token_balances
  FOR EACH STATEMENT EXECUTE FUNCTION protoscan_notify_change();
--> statement-breakpoint
CREATE TRIGGER indexer_cursor_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON indexer_cursor
  FOR EACH STATEMENT EXECUTE FUNCTION protoscan_notify_change();
