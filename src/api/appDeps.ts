import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from "fastify";
import type { ChainClient } from "../chain/createChainClient.ts";
import type { PriceEngine } from "../prices/createPriceEngine.ts";
import type { PriceHistory } from "../prices/createPriceHistory.ts";
import type { TransactionValuer } from "../prices/transactionValues.ts";
import type { Hub, HubSource } from "../realtime/createHub.ts";
import type { UsdStats } from "../stats/createUsdStats.ts";
import type { ChangeNotices } from "../store/changeNotices.ts";
import type { Database } from "../store/createDatabase.ts";
import type { WriterLock } from "../store/createWriterLock.ts";
import type { Tracker } from "../tracking/createTracker.ts";
import type { InboxSignal } from "../webhooks/inboxSignal.ts";
import type { AccountReader } from "./createAccountReader.ts";

/** What the API shows of a polling indexer (`Indexer.status()` in src/indexer/createIndexer.ts). */
export type IndexerStatus = {
  chainHead: number | null;
  indexedBlock: number | null;
  lastRunAt: Date | null;
  /** why the indexer stopped for good, else null (GET /readyz) */
  failure: string | null;
};

export type AppDeps = {
  database: Database;
  chain: ChainClient;
  /**
   * the progress of this process's polling indexer (processes that run the writers): read only, the API
   * never drives the poller
   */
  indexerStatus?: () => IndexerStatus;
  /** the WebSocket hub behind GET /ws (processes that serve the API) */
  hub?: Hub;
  /**
   * the stored and removed transactions this process hears of (the hub's source): read caches are emptied
   * by them (api/cache/createResponseCache.ts); without it nothing is cached
   */
  events?: HubSource;
  /** wakes the webhook inbox worker of this process when a delivery is stored (roles all) */
  inboxSignal?: InboxSignal;
  /** ingests hashes submitted to POST /api/track-tx (processes that serve the API) */
  tracker?: Tracker;
  /** the single-writer election, shown by GET /readyz (role all on PostgreSQL) */
  writerLock?: Pick<WriterLock, "status">;
  /** the price engine (in one process, the one the indexer's price refresh uses); built when absent */
  prices?: PriceEngine;
  /** prices at past times (SPEC §10.1), behind transaction values and price history; built when absent */
  history?: PriceHistory;
  /** the USD statistics behind protocol stats, overview and /api/stats; built when absent */
  usdStats?: UsdStats;
  /**
   * committed changes to token balances and the cursor (migration 0009), which empty the caches built from
   * them; with `events` and without it, the app listens itself (and stops when it closes)
   */
  changes?: ChangeNotices;
  /** the built web explorer to serve (default dist/web, written by `npm install`) */
  webRoot?: string;
};

/**
 * What route modules receive: the app's deps with the price engine, the price history, the transaction
 * valuer (USD at block time, SPEC §10.2) and the USD statistics filled in, and the one reader of live
 * balances and code that the address view and the search share (so one address is cached once).
 */
export type RouteDeps = AppDeps & {
  prices: PriceEngine;
  history: PriceHistory;
  valueTransactions: TransactionValuer;
  usdStats: UsdStats;
  accounts: AccountReader;
};

export const BODY_LIMIT = 1024 * 1024;

/**
 * The app as route modules receive it: request params, query and body are typed by each route's TypeBox
 * schemas (the type provider `buildApp` sets), so a schema change that a handler does not follow is a type
 * error instead of a cast that lies.
 */
export type RouteApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
