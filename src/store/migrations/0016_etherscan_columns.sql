ALTER TABLE "transactions" ADD COLUMN "nonce" bigint;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "gas_limit" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "input" text;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "cumulative_gas_used" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "method_id" text;--> statement-breakpoint
-- Rows stored before this migration: the method id where the stored call tells it (a plain transfer has none,
-- an undecoded call kept its selector as its function name); the other columns stay null (docs/etherscan.md).
UPDATE "transactions" SET "method_id" = CASE
  WHEN "action_type" = 'nativeTransfer' THEN '0x'
  ELSE "function_name"
END
WHERE "method_id" IS NULL AND ("action_type" = 'nativeTransfer' OR "function_name" ~ '^0x[0-9a-f]{8}$');
