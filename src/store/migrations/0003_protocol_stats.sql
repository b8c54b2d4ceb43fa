CREATE TABLE "address_stats" (
	"address" text PRIMARY KEY NOT NULL,
	"transaction_count" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "protocol_stats" (
	"protocol" text PRIMARY KEY NOT NULL,
	"transaction_count" bigint DEFAULT 0 NOT NULL,
	"unique_users" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "protocol_users" (
	"protocol" text NOT NULL,
	"address" text NOT NULL,
	"transaction_count" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "protocol_users_protocol_address_pk" PRIMARY KEY("protocol","address")
);
--> statement-breakpoint
CREATE TABLE "stat_counters" (
	"name" text PRIMARY KEY NOT NULL,
	"value" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX "address_transactions_address_protocol_block_idx" ON "address_transactions" USING btree ("address","protocol","block_number" DESC NULLS LAST,"transaction_index" DESC NULLS LAST);