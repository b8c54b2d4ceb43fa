CREATE TABLE "address_transactions" (
	"address" text NOT NULL,
	"tx_hash" text NOT NULL,
	"block_number" bigint NOT NULL,
	"transaction_index" integer NOT NULL,
	"protocol" text NOT NULL,
	CONSTRAINT "address_transactions_address_tx_hash_pk" PRIMARY KEY("address","tx_hash")
);
--> statement-breakpoint
CREATE TABLE "blocks" (
	"number" bigint PRIMARY KEY NOT NULL,
	"hash" text NOT NULL,
	"parent_hash" text NOT NULL,
	"timestamp" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "indexer_cursor" (
	"name" text PRIMARY KEY NOT NULL,
	"block_number" bigint NOT NULL,
	"filter_hash" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "logs" (
	"tx_hash" text NOT NULL,
	"log_index" integer NOT NULL,
	"block_number" bigint NOT NULL,
	"address" text NOT NULL,
	"topics" text[] NOT NULL,
	"data" text NOT NULL,
	"event_name" text,
	"event_args" jsonb,
	CONSTRAINT "logs_tx_hash_log_index_pk" PRIMARY KEY("tx_hash","log_index")
);
--> statement-breakpoint
CREATE TABLE "prices" (
	"token_address" text PRIMARY KEY NOT NULL,
	"price_usd" double precision NOT NULL,
	"source" text NOT NULL,
	"price_at" timestamp (3) with time zone NOT NULL,
	"fetched_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "token_balances" (
	"token_address" text NOT NULL,
	"holder" text NOT NULL,
	"balance" numeric(78, 0) NOT NULL,
	"block_number" bigint NOT NULL,
	CONSTRAINT "token_balances_token_address_holder_pk" PRIMARY KEY("token_address","holder")
);
--> statement-breakpoint
CREATE TABLE "token_state" (
	"token_address" text PRIMARY KEY NOT NULL,
	"balance_mode" text NOT NULL,
	"from_block" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "token_transfers" (
	"tx_hash" text NOT NULL,
	"log_index" integer NOT NULL,
	"block_number" bigint NOT NULL,
	"transaction_index" integer NOT NULL,
	"block_timestamp" timestamp (3) with time zone NOT NULL,
	"token_address" text NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	CONSTRAINT "token_transfers_tx_hash_log_index_pk" PRIMARY KEY("tx_hash","log_index")
);
--> statement-breakpoint
CREATE TABLE "tracked_transactions" (
	"tx_hash" text PRIMARY KEY NOT NULL,
	"protocol_hint" text,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"last_checked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "transactions" (
	"hash" text PRIMARY KEY NOT NULL,
	"block_number" bigint NOT NULL,
	"block_hash" text NOT NULL,
	"transaction_index" integer NOT NULL,
	"block_timestamp" timestamp (3) with time zone NOT NULL,
	"from_address" text NOT NULL,
	"to_address" text,
	"contract_address" text,
	"value_wei" numeric(78, 0) NOT NULL,
	"gas_used" numeric(78, 0) NOT NULL,
	"gas_price" numeric(78, 0) NOT NULL,
	"status" boolean NOT NULL,
	"protocol" text NOT NULL,
	"action_type" text NOT NULL,
	"function_name" text NOT NULL,
	"function_args" jsonb NOT NULL,
	"source" text NOT NULL,
	"stored_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_inbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"delivery_id" text NOT NULL,
	"raw_body" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"processed_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE INDEX "address_transactions_address_block_idx" ON "address_transactions" USING btree ("address","block_number" DESC NULLS LAST,"transaction_index" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "address_transactions_block_idx" ON "address_transactions" USING btree ("block_number");--> statement-breakpoint
CREATE UNIQUE INDEX "blocks_hash_idx" ON "blocks" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "logs_block_idx" ON "logs" USING btree ("block_number");--> statement-breakpoint
CREATE INDEX "token_balances_token_balance_idx" ON "token_balances" USING btree ("token_address","balance" DESC NULLS LAST,"holder") WHERE "token_balances"."balance" > 0;--> statement-breakpoint
CREATE INDEX "token_balances_holder_idx" ON "token_balances" USING btree ("holder");--> statement-breakpoint
CREATE INDEX "token_transfers_token_block_idx" ON "token_transfers" USING btree ("token_address","block_number" DESC NULLS LAST,"log_index" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "token_transfers_block_idx" ON "token_transfers" USING btree ("block_number");--> statement-breakpoint
CREATE INDEX "tracked_transactions_pending_idx" ON "tracked_transactions" USING btree ("expires_at") WHERE "tracked_transactions"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "transactions_block_idx" ON "transactions" USING btree ("block_number" DESC NULLS LAST,"transaction_index" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "transactions_protocol_block_idx" ON "transactions" USING btree ("protocol","block_number" DESC NULLS LAST,"transaction_index" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "transactions_protocol_action_block_idx" ON "transactions" USING btree ("protocol","action_type","block_number" DESC NULLS LAST,"transaction_index" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "transactions_action_block_idx" ON "transactions" USING btree ("action_type","block_number" DESC NULLS LAST,"transaction_index" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "transactions_timestamp_idx" ON "transactions" USING btree ("block_timestamp");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_inbox_delivery_idx" ON "webhook_inbox" USING btree ("provider","delivery_id");--> statement-breakpoint
CREATE INDEX "webhook_inbox_pending_idx" ON "webhook_inbox" USING btree ("id") WHERE "webhook_inbox"."status" = 'pending';