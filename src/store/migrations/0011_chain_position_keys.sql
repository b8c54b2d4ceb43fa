-- Logs, token transfers and address rows are keyed by their place in the chain instead of by transaction hash
-- (schema.ts; docs/performance.md, "Where the time goes now"): (block_number, transaction_index, log_index) for
-- `logs` and `token_transfers`, (block_number, transaction_index, address) for `address_transactions`. The store
-- holds one block per number, so the keys name the same rows as before, whether a chain numbers its logs per
-- block or per transaction. They grow with the chain: a backfill appends to them, where a hash key took every
-- row at a random place of the index. Their block_number prefix serves reorg rollbacks, so the three
-- block_number indexes go, and readers find a transaction's rows by its block and index. `logs` gains the
-- transaction's index for this, copied from its transaction.
ALTER TABLE "logs" ADD COLUMN "transaction_index" integer;--> statement-breakpoint
UPDATE "logs" SET "transaction_index" = t."transaction_index" FROM "transactions" t WHERE t."hash" = "logs"."tx_hash";--> statement-breakpoint
-- A log without its transaction (none is written so) cannot be placed: it goes.
DELETE FROM "logs" WHERE "transaction_index" IS NULL;--> statement-breakpoint
ALTER TABLE "logs" ALTER COLUMN "transaction_index" SET NOT NULL;--> statement-breakpoint
DROP INDEX "address_transactions_block_idx";--> statement-breakpoint
DROP INDEX "logs_block_idx";--> statement-breakpoint
DROP INDEX "token_transfers_block_idx";--> statement-breakpoint
ALTER TABLE "address_transactions" DROP CONSTRAINT "address_transactions_address_tx_hash_pk";--> statement-breakpoint
ALTER TABLE "logs" DROP CONSTRAINT "logs_tx_hash_log_index_pk";--> statement-breakpoint
ALTER TABLE "token_transfers" DROP CONSTRAINT "token_transfers_tx_hash_log_index_pk";--> statement-breakpoint
ALTER TABLE "address_transactions" ADD CONSTRAINT "address_transactions_block_index_address_pk" PRIMARY KEY("block_number","transaction_index","address");--> statement-breakpoint
ALTER TABLE "logs" ADD CONSTRAINT "logs_block_index_log_pk" PRIMARY KEY("block_number","transaction_index","log_index");--> statement-breakpoint
ALTER TABLE "token_transfers" ADD CONSTRAINT "token_transfers_block_index_log_pk" PRIMARY KEY("block_number","transaction_index","log_index");
