import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

/**
 * protoscan's storage (SPEC §2). Conventions:
 * - addresses and hashes are lowercase 0x-hex `text`;
 * - uint256 values are `numeric(78,0)` mapped to `bigint` in code;
 * - block numbers are `bigint` mapped to JS numbers (they stay far below 2^53);
 * - timestamps are `timestamptz(3)`.
 *
 * Every list the API serves is backed by a named index here (see docs/performance.md).
 * Migrations are generated from this file with `npm run db:generate` and are append-only.
 */

const uint256 = (name: string) => numeric(name, { precision: 78, scale: 0, mode: "bigint" });
const blockNumber = (name: string) => bigint(name, { mode: "number" });
const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: "date" });

/** Transactions that touch the configured protocols, one row per hash. */
export const transactions = pgTable(
  "transactions",
  {
    hash: text("hash").primaryKey(),
    blockNumber: blockNumber("block_number").notNull(),
    blockHash: text("block_hash").notNull(),
    transactionIndex: integer("transaction_index").notNull(),
    blockTimestamp: ts("block_timestamp").notNull(),
    fromAddress: text("from_address").notNull(),
    /** null for a contract creation */
    toAddress: text("to_address"),
    /** the created contract, for a contract creation */
    contractAddress: text("contract_address"),
    valueWei: uint256("value_wei").notNull(),
    gasUsed: uint256("gas_used").notNull(),
    /** effective gas price from the receipt */
    gasPrice: uint256("gas_price").notNull(),
    status: boolean("status").notNull(),
    protocol: text("protocol").notNull(),
    actionType: text("action_type").notNull(),
    functionName: text("function_name").notNull(),
    /** decoded call arguments keyed by name, values as strings (`{}` when undecodable) */
    functionArgs: jsonb("function_args").$type<Record<string, unknown>>().notNull(),
    /**
     * The transaction's own facts the Etherscan API lists (SPEC §11 `txlist`), stored since migration 0016:
     * null in rows stored before it (`method_id` excepted where the stored call allowed it), until a re-index
     * (docs/etherscan.md).
     */
    nonce: bigint("nonce", { mode: "number" }),
    /** the gas limit the sender set (`gas`) */
    gasLimit: uint256("gas_limit"),
    /** the call data, `0x` for none */
    input: text("input"),
    cumulativeGasUsed: uint256("cumulative_gas_used"),
    /** the first four bytes of the input (`0x` for a plain transfer) */
    methodId: text("method_id"),
    /** which pipeline stored it first: poll | webhook | track */
    source: text("source").notNull(),
    storedAt: ts("stored_at").notNull().defaultNow(),
  },
  (t) => [
    index("transactions_block_idx").on(t.blockNumber.desc(), t.transactionIndex.desc()),
    index("transactions_protocol_block_idx").on(t.protocol, t.blockNumber.desc(), t.transactionIndex.desc()),
    index("transactions_protocol_action_block_idx").on(
      t.protocol,
      t.actionType,
      t.blockNumber.desc(),
      t.transactionIndex.desc(),
    ),
    index("transactions_action_block_idx").on(t.actionType, t.blockNumber.desc(), t.transactionIndex.desc()),
    index("transactions_timestamp_idx").on(t.blockTimestamp),
  ],
);

/** topic0 of Uniswap V2's `Sync(uint112 reserve0, uint112 reserve1)`: the pool's reserves after each change. */
export const SYNC_TOPIC = "0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1";

/**
 * Every log of every stored transaction's receipt, decoded when an ABI matches. Keyed by its place in the
 * chain, `(block_number, transaction_index, log_index)`: the store holds one block per number, so this names
 * one log (whether a chain numbers logs per block, as it should, or per transaction), the key grows with the
 * chain, so a backfill appends to it instead of inserting a random hash into it, and a reorg rollback deletes
 * by its prefix. A transaction's logs are the range of its block and index.
 */
export const logs = pgTable(
  "logs",
  {
    txHash: text("tx_hash").notNull(),
    logIndex: integer("log_index").notNull(),
    blockNumber: blockNumber("block_number").notNull(),
    transactionIndex: integer("transaction_index").notNull(),
    address: text("address").notNull(),
    topics: text("topics").array().notNull(),
    data: text("data").notNull(),
    /** null when no known ABI decodes it */
    eventName: text("event_name"),
    eventArgs: jsonb("event_args").$type<Record<string, unknown>>(),
  },
  (t) => [
    primaryKey({ name: "logs_block_tx_log_pk", columns: [t.blockNumber, t.txHash, t.logIndex] }),
    // Uniswap-V2 `Sync` logs of pools by pool, newest first: the dex price at a past block (SPEC §10.1,
    // prices/createPriceHistory.ts) is the last one at or before it. Partial: Syncs are few among all logs.
    index("logs_sync_idx")
      .on(t.address, t.blockNumber.desc(), t.transactionIndex.desc(), t.logIndex.desc())
      .where(sql.raw(`topics[1] = '${SYNC_TOPIC}'`)),
  ],
);

/** ERC-20 Transfer logs of tracked tokens found in stored transactions, keyed by their place in the chain as `logs`. */
export const tokenTransfers = pgTable(
  "token_transfers",
  {
    txHash: text("tx_hash").notNull(),
    logIndex: integer("log_index").notNull(),
    blockNumber: blockNumber("block_number").notNull(),
    transactionIndex: integer("transaction_index").notNull(),
    blockTimestamp: ts("block_timestamp").notNull(),
    tokenAddress: text("token_address").notNull(),
    fromAddress: text("from_address").notNull(),
    toAddress: text("to_address").notNull(),
    amount: uint256("amount").notNull(),
  },
  (t) => [
    primaryKey({
      name: "token_transfers_block_tx_log_pk",
      columns: [t.blockNumber, t.txHash, t.logIndex],
    }),
    index("token_transfers_token_block_idx").on(t.tokenAddress, t.blockNumber.desc(), t.logIndex.desc()),
    // A token's events filtered by a party: one index scan per side, merged (UNION) newest first.
    index("token_transfers_token_from_block_idx").on(
      t.tokenAddress,
      t.fromAddress,
      t.blockNumber.desc(),
      t.logIndex.desc(),
    ),
    index("token_transfers_token_to_block_idx").on(
      t.tokenAddress,
      t.toAddress,
      t.blockNumber.desc(),
      t.logIndex.desc(),
    ),
  ],
);

/**
 * Which addresses take part in which stored transaction (sender, recipient, token-transfer party):
 * maintained on insert so that address transaction lists page by index, never by scanning transfers. Keyed
 * by the transaction's place in the chain, `(block_number, transaction_index)`, and the address, like `logs`.
 */
export const addressTransactions = pgTable(
  "address_transactions",
  {
    address: text("address").notNull(),
    txHash: text("tx_hash").notNull(),
    blockNumber: blockNumber("block_number").notNull(),
    transactionIndex: integer("transaction_index").notNull(),
    protocol: text("protocol").notNull(),
  },
  (t) => [
    primaryKey({
      name: "address_transactions_block_tx_address_pk",
      columns: [t.blockNumber, t.txHash, t.address],
    }),
    index("address_transactions_address_block_idx").on(
      t.address,
      t.blockNumber.desc(),
      t.transactionIndex.desc(),
    ),
    // An address's transactions filtered by protocol (`?protocol=`): one seek, newest first.
    index("address_transactions_address_protocol_block_idx").on(
      t.address,
      t.protocol,
      t.blockNumber.desc(),
      t.transactionIndex.desc(),
    ),
  ],
);

/** (token, holder) -> balance at `blockNumber`, for tracked tokens. Zero balances are kept (and hidden). */
export const tokenBalances = pgTable(
  "token_balances",
  {
    tokenAddress: text("token_address").notNull(),
    holder: text("holder").notNull(),
    balance: uint256("balance").notNull(),
    blockNumber: blockNumber("block_number").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tokenAddress, t.holder] }),
    index("token_balances_token_balance_idx")
      .on(t.tokenAddress, t.balance.desc(), t.holder)
      .where(sql`${t.balance} > 0`),
    index("token_balances_holder_idx").on(t.holder),
  ],
);

/**
 * Per-token counters read by the token detail and the holders total in O(1): stored transfers, and holders
 * with a balance above zero. Maintained by statement-level triggers on `token_transfers` and
 * `token_balances` (migration `0002_token_stats_triggers`), so they stay exact through ingest, reorg
 * rollback and any direct write. A token with no row has zero of both.
 */
export const tokenStats = pgTable("token_stats", {
  tokenAddress: text("token_address").primaryKey(),
  transfersCount: bigint("transfers_count", { mode: "number" }).notNull().default(0),
  holdersCount: bigint("holders_count", { mode: "number" }).notNull().default(0),
});

/**
 * Per-token indexing facts: how its balances are kept. `delta` when its whole history is indexed
 * (exact arithmetic over its transfers), `call` when balances are read with `balanceOf`.
 */
export const tokenState = pgTable("token_state", {
  tokenAddress: text("token_address").primaryKey(),
  balanceMode: text("balance_mode").notNull(),
  /** the first block whose transfers are all indexed */
  fromBlock: blockNumber("from_block").notNull(),
});

/** The polling indexer's cursor: the last block whose whole range is committed. */
export const indexerCursor = pgTable("indexer_cursor", {
  name: text("name").primaryKey(),
  blockNumber: blockNumber("block_number").notNull(),
  /** fingerprint of the scanned address set; a change means the new addresses need a backfill */
  filterHash: text("filter_hash").notNull(),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/**
 * Secondary indexes of the ingest tables dropped for an initial backfill, with the statement that builds each
 * again (store/deferredIndexes.ts): built in bulk once the indexer has caught up, or before migrations run.
 * Empty otherwise.
 */
export const deferredIndexes = pgTable("deferred_indexes", {
  name: text("name").primaryKey(),
  definition: text("definition").notNull(),
});

/** Hashes of recent blocks (at least the unfinalized window) to detect reorgs, and blocks of stored txs. */
export const blocks = pgTable(
  "blocks",
  {
    number: blockNumber("number").primaryKey(),
    hash: text("hash").notNull(),
    parentHash: text("parent_hash").notNull(),
    timestamp: ts("timestamp").notNull(),
  },
  (t) => [uniqueIndex("blocks_hash_idx").on(t.hash)],
);

/** Webhook deliveries exactly as received, written before they are acknowledged. */
export const webhookInbox = pgTable(
  "webhook_inbox",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    provider: text("provider").notNull(),
    deliveryId: text("delivery_id").notNull(),
    rawBody: text("raw_body").notNull(),
    /** pending | done | failed */
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    receivedAt: ts("received_at").notNull().defaultNow(),
    processedAt: ts("processed_at"),
    /**
     * A pending delivery is not picked up before this time: set forward while a worker holds it (a lease that
     * lapses if that worker dies) and to the retry time after a failed or not-yet-mined attempt.
     */
    nextAttemptAt: ts("next_attempt_at").notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("webhook_inbox_delivery_idx").on(t.provider, t.deliveryId),
    index("webhook_inbox_pending_idx").on(t.id).where(sql`${t.status} = 'pending'`),
  ],
);

/**
 * Transactions submitted to `POST /api/track-tx` that were not mined yet, and webhook or track-tx transactions
 * a reorg removed: re-checked until mined or expired, then stored with `source`.
 */
export const trackedTransactions = pgTable(
  "tracked_transactions",
  {
    txHash: text("tx_hash").primaryKey(),
    protocolHint: text("protocol_hint"),
    /** the pipeline it is stored under once mined: track | webhook */
    source: text("source").notNull().default("track"),
    /** pending | indexed | not_relevant | expired */
    status: text("status").notNull().default("pending"),
    createdAt: ts("created_at").notNull().defaultNow(),
    expiresAt: ts("expires_at").notNull(),
    lastCheckedAt: ts("last_checked_at"),
  },
  (t) => [index("tracked_transactions_pending_idx").on(t.expiresAt).where(sql`${t.status} = 'pending'`)],
);

/** The latest USD price of each token with its tier (api | dex | static) and time. */
export const prices = pgTable("prices", {
  tokenAddress: text("token_address").primaryKey(),
  priceUsd: doublePrecision("price_usd").notNull(),
  source: text("source").notNull(),
  /** when the price was true (the upstream's timestamp when it gives one) */
  priceAt: ts("price_at").notNull(),
  fetchedAt: ts("fetched_at").notNull().defaultNow(),
});

/**
 * Per-protocol counters behind `GET /api/protocol/:id/stats` and the overview (SPEC §7): stored
 * transactions attributed to the protocol and distinct senders among them, all time. Maintained by
 * statement-level triggers on `transactions` (migration `protocol_stats_triggers`), so they stay exact
 * through ingest, reorg rollback and any direct write. A protocol with no row has zero of both.
 */
export const protocolStats = pgTable("protocol_stats", {
  protocol: text("protocol").primaryKey(),
  transactionCount: bigint("transaction_count", { mode: "number" }).notNull().default(0),
  uniqueUsers: bigint("unique_users", { mode: "number" }).notNull().default(0),
  /** when a transaction of the protocol was last stored or removed */
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/** (protocol, sender) -> its stored transactions: the distinct set counted by `protocol_stats.unique_users`. */
export const protocolUsers = pgTable(
  "protocol_users",
  {
    protocol: text("protocol").notNull(),
    address: text("address").notNull(),
    transactionCount: bigint("transaction_count", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.protocol, t.address] })],
);

/**
 * Every address taking part in a stored transaction (the parties of `address_transactions`) with how many:
 * the distinct set behind `stat_counters.addresses`. Maintained by triggers on `address_transactions`.
 */
export const addressStats = pgTable("address_stats", {
  address: text("address").primaryKey(),
  transactionCount: bigint("transaction_count", { mode: "number" }).notNull().default(0),
});

/** Global counters kept by triggers (`addresses`: rows of `address_stats`), read in O(1) by the stats. */
export const statCounters = pgTable("stat_counters", {
  name: text("name").primaryKey(),
  value: bigint("value", { mode: "number" }).notNull().default(0),
});

/** What a `removed` outbox row keeps of the removed transaction for WebSocket topics (its rows are gone). */
export type OutboxRemovedDetail = { protocol: string; parties: string[]; tokens: string[] };

/**
 * The outbox of the PostgreSQL fan-out (SPEC §5, §9): one row per broadcast event (a stored transaction, or a
 * transaction removed by a reorg), written in the database transaction that stored or removed it, under a
 * transaction-level advisory lock so that `seq` order is commit order. `--role api` replicas deliver rows in
 * `seq` order, woken by NOTIFY, and catch up from the last `seq` they delivered after a lost connection.
 * Rows are pruned after a retention period (store/outbox.ts). Not written on PGlite (one process).
 */
export const broadcastOutbox = pgTable(
  "broadcast_outbox",
  {
    seq: bigserial("seq", { mode: "number" }).primaryKey(),
    /** transaction | removed */
    kind: text("kind").notNull(),
    txHash: text("tx_hash").notNull(),
    blockNumber: blockNumber("block_number").notNull(),
    /** the block the event is about: a listener ignores a `transaction` row whose stored copy moved since */
    blockHash: text("block_hash").notNull(),
    /** `removed` only */
    detail: jsonb("detail").$type<OutboxRemovedDetail>(),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [index("broadcast_outbox_created_idx").on(t.createdAt)],
);

/**
 * The USD volume of each recent stored transaction (SPEC §7 `dailyVolume`, docs/prices.md): one row per
 * transaction no older than 25 hours, created and deleted with it by triggers on `transactions` (migration
 * `usd_volume_triggers`), valued once by the USD statistics with the prices of that moment (`volume_usd` is
 * null until then), pruned once it has left the trailing-24-hours window.
 */
export const transactionVolumes = pgTable(
  "transaction_volumes",
  {
    txHash: text("tx_hash").primaryKey(),
    protocol: text("protocol").notNull(),
    blockTimestamp: ts("block_timestamp").notNull(),
    /** null until valued */
    volumeUsd: doublePrecision("volume_usd"),
    /** fingerprint of the configuration it was valued under (protocol addresses, tracked tokens) */
    configHash: text("config_hash"),
    valuedAt: ts("valued_at"),
  },
  (t) => [
    index("transaction_volumes_timestamp_idx").on(t.blockTimestamp),
    index("transaction_volumes_pending_idx").on(t.blockTimestamp).where(sql`${t.volumeUsd} is null`),
  ],
);

/**
 * Per protocol and UTC hour of block time: the transactions of `transaction_volumes` and the sum of their
 * valued USD volume (exact `numeric`, so adding and removing a value leaves no rounding residue). Kept by
 * statement-level triggers on `transaction_volumes`; the trailing 24 hours read at most 25 rows per protocol.
 */
export const protocolVolumeHours = pgTable(
  "protocol_volume_hours",
  {
    protocol: text("protocol").notNull(),
    hour: ts("hour").notNull(),
    transactions: bigint("transactions", { mode: "number" }).notNull().default(0),
    volumeUsd: numeric("volume_usd").notNull().default("0"),
  },
  (t) => [primaryKey({ columns: [t.protocol, t.hour] })],
);

/**
 * Price history (SPEC §10.1): every price the engine resolved (its tier and the time it was true), and the
 * hourly api points of the backfill. Keyed by token, tier and time; a point recorded again at the same time
 * replaces the earlier one. Dex prices at past blocks are not kept here: they come from the stored `Sync`
 * logs (`logs_sync_idx`), which leave with their blocks on a reorg. Writes NOTIFY `protoscan_changes`
 * (migration 0015), so the read caches holding transaction values are emptied.
 */
export const priceHistory = pgTable(
  "price_history",
  {
    tokenAddress: text("token_address").notNull(),
    /** api | dex | static */
    source: text("source").notNull(),
    time: ts("time").notNull(),
    priceUsd: doublePrecision("price_usd").notNull(),
    /** engine (a resolved price) | backfill (the api tier's historical endpoint) */
    origin: text("origin").notNull(),
    recordedAt: ts("recorded_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "price_history_pk", columns: [t.tokenAddress, t.source, t.time] })],
);

/**
 * Progress of the api-tier backfill per token and provider (prices/createPriceBackfill.ts): hourly history is
 * fetched for `[coveredFrom, coveredTo]`, growing at both ends; kept across restarts, so a restart resumes.
 */
export const priceBackfill = pgTable(
  "price_backfill",
  {
    tokenAddress: text("token_address").notNull(),
    provider: text("provider").notNull(),
    coveredFrom: ts("covered_from").notNull(),
    coveredTo: ts("covered_to").notNull(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tokenAddress, t.provider] })],
);

/**
 * Protocol and global history (SPEC §10.3, docs/api.md "History"): per span (`hour` | `day`), protocol
 * (`''`: all protocols together) and UTC bucket start, the stored transactions whose block time is in the
 * bucket and their distinct senders. Kept by statement-level triggers on `transactions` (migration
 * `history_rollups`), in the statement that writes or deletes the transactions, so ingest, reorg rollback and
 * any direct write keep them exact. `revision` takes a new value of `history_revision_seq` whenever what a
 * bucket's USD volume depends on may have changed (its transactions, a token transfer, a price at or before its
 * end): a cached volume is valid only while the revision it was computed at is current. A bucket with no row
 * is empty; a row whose count fell to zero stays (with a new revision).
 */
export const historyBuckets = pgTable(
  "history_buckets",
  {
    span: text("span").notNull(),
    protocol: text("protocol").notNull(),
    bucket: ts("bucket").notNull(),
    transactionCount: bigint("transaction_count", { mode: "number" }).notNull().default(0),
    uniqueUsers: bigint("unique_users", { mode: "number" }).notNull().default(0),
    revision: bigint("revision", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ name: "history_buckets_pk", columns: [t.span, t.protocol, t.bucket] })],
);

/** (span, protocol or `''`, bucket, sender) -> its transactions there: the set behind `unique_users`. */
export const historyUsers = pgTable(
  "history_users",
  {
    span: text("span").notNull(),
    protocol: text("protocol").notNull(),
    bucket: ts("bucket").notNull(),
    address: text("address").notNull(),
    transactionCount: bigint("transaction_count", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ name: "history_users_pk", columns: [t.span, t.protocol, t.bucket, t.address] })],
);

/**
 * The USD volume of a history bucket (SPEC §10.3 `volumeUsd`) as last computed by a reader, with the bucket's
 * `revision` read before its transactions were, and the configuration it was computed under: served while both
 * are still current. Written by readers only (never by the ingest, so the two never wait on each other).
 */
export const historyVolumes = pgTable(
  "history_volumes",
  {
    span: text("span").notNull(),
    protocol: text("protocol").notNull(),
    bucket: ts("bucket").notNull(),
    revision: bigint("revision", { mode: "number" }).notNull(),
    configHash: text("config_hash").notNull(),
    volumeUsd: doublePrecision("volume_usd").notNull(),
  },
  (t) => [primaryKey({ name: "history_volumes_pk", columns: [t.span, t.protocol, t.bucket] })],
);

/**
 * The holders whose balances history follows: every configured protocol's `tvlAddresses`, written from the
 * configuration (store/historyHolders.ts), which also fills `history_holder_hours` for a holder it adds.
 */
export const historyHolders = pgTable("history_holders", {
  address: text("address").primaryKey(),
});

/**
 * Per tracked token, followed holder and UTC hour of block time: the net amount its stored transfers moved
 * into the holder (negative: out). Summed up to a time it is the holder's balance then, for a token whose whole
 * history is stored (SPEC §10.3 `tvlUsd`). Kept by statement-level triggers on `token_transfers`.
 */
export const historyHolderHours = pgTable(
  "history_holder_hours",
  {
    tokenAddress: text("token_address").notNull(),
    holder: text("holder").notNull(),
    hour: ts("hour").notNull(),
    delta: numeric("delta", { precision: 78, scale: 0, mode: "bigint" }).notNull(),
  },
  (t) => [primaryKey({ name: "history_holder_hours_pk", columns: [t.holder, t.tokenAddress, t.hour] })],
);
