CREATE TABLE "protocol_volume_hours" (
	"protocol" text NOT NULL,
	"hour" timestamp (3) with time zone NOT NULL,
	"transactions" bigint DEFAULT 0 NOT NULL,
	"volume_usd" numeric DEFAULT '0' NOT NULL,
	CONSTRAINT "protocol_volume_hours_protocol_hour_pk" PRIMARY KEY("protocol","hour")
);
--> statement-breakpoint
CREATE TABLE "transaction_volumes" (
	"tx_hash" text PRIMARY KEY NOT NULL,
	"protocol" text NOT NULL,
	"block_timestamp" timestamp (3) with time zone NOT NULL,
	"volume_usd" double precision,
	"config_hash" text,
	"valued_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE INDEX "transaction_volumes_timestamp_idx" ON "transaction_volumes" USING btree ("block_timestamp");--> statement-breakpoint
CREATE INDEX "transaction_volumes_pending_idx" ON "transaction_volumes" USING btree ("block_timestamp") WHERE "transaction_volumes"."volume_usd" is null;