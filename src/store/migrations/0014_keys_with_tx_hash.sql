-- The keys of 0011 with the transaction's hash in place of its index: (block_number, tx_hash, log_index) and
-- (block_number, tx_hash, address). Two rows conflict only when they belong to the same transaction, as with the
-- keys before 0011; keyed by position, a transfer of another transaction at the same place was skipped while its
-- balance delta was applied (the fault simulation, seed 2 on PostgreSQL). The block_number prefix still serves
-- rollbacks and keeps backfill inserts near the end of the index.
ALTER TABLE "address_transactions" DROP CONSTRAINT "address_transactions_block_index_address_pk";--> statement-breakpoint
ALTER TABLE "logs" DROP CONSTRAINT "logs_block_index_log_pk";--> statement-breakpoint
ALTER TABLE "token_transfers" DROP CONSTRAINT "token_transfers_block_index_log_pk";--> statement-breakpoint
ALTER TABLE "address_transactions" ADD CONSTRAINT "address_transactions_block_tx_address_pk" PRIMARY KEY("block_number","tx_hash","address");--> statement-breakpoint
ALTER TABLE "logs" ADD CONSTRAINT "logs_block_tx_log_pk" PRIMARY KEY("block_number","tx_hash","log_index");--> statement-breakpoint
ALTER TABLE "token_transfers" ADD CONSTRAINT "token_transfers_block_tx_log_pk" PRIMARY KEY("block_number","tx_hash","log_index");