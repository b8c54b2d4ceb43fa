CREATE TABLE "price_backfill" (
	"token_address" text NOT NULL,
	"provider" text NOT NULL,
	"covered_from" timestamp (3) with time zone NOT NULL,
	"covered_to" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "price_backfill_token_address_provider_pk" PRIMARY KEY("token_address","provider")
);
--> statement-breakpoint
CREATE TABLE "price_history" (
	"token_address" text NOT NULL,
	"source" text NOT NULL,
	"time" timestamp (3) with time zone NOT NULL,
	"price_usd" double precision NOT NULL,
	"origin" text NOT NULL,
	"recorded_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "price_history_pk" PRIMARY KEY("token_address","source","time")
);
--> statement-breakpoint
CREATE INDEX "logs_sync_idx" ON "logs" USING btree ("address","block_number" DESC NULLS LAST,"transaction_index" DESC NULLS LAST,"log_index" DESC NULLS LAST) WHERE topics[1] = '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1';
--> statement-breakpoint
-- Price history changes what transaction values (SPEC §10.2) are served: its writes are announced on the
-- channel of migration 0009, and the caches holding transaction values are emptied by them.
CREATE TRIGGER price_history_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON price_history
  FOR EACH STATEMENT EXECUTE FUNCTION protoscan_notify_change();
