CREATE TABLE "token_stats" (
	"token_address" text PRIMARY KEY NOT NULL,
	"transfers_count" bigint DEFAULT 0 NOT NULL,
	"holders_count" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX "token_transfers_token_from_block_idx" ON "token_transfers" USING btree ("token_address","from_address","block_number" DESC NULLS LAST,"log_index" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "token_transfers_token_to_block_idx" ON "token_transfers" USING btree ("token_address","to_address","block_number" DESC NULLS LAST,"log_index" DESC NULLS LAST);