import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * Every Prometheus series protoscan exposes, on one registry per process (so tests can build several apps).
 * Labels never carry URLs, keys or other secrets: HTTP requests are labelled with the route pattern
 * (`/api/tx/:hash`), never the raw URL. The WebSocket hub adds its own series (`realtime/hubMetrics.ts`).
 * docs/operations.md lists them with the alerts worth setting.
 */
export type Metrics = ReturnType<typeof createMetrics>;

export type MetricsOptions = {
  /** Also collect Node's process metrics (`process_*`, `nodejs_*`: CPU, memory, event loop lag). */
  processMetrics?: boolean;
};

export function createMetrics(options: MetricsOptions = {}) {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const indexerHeadBlock = new Gauge({
    name: "protoscan_indexer_chain_head_block",
    help: "Latest chain head seen by the indexer",
    registers: [registry],
  });
  const indexerIndexedBlock = new Gauge({
    name: "protoscan_indexer_indexed_block",
    help: "Last fully indexed block",
    registers: [registry],
  });
  return {
    registry,
    rpcRequests: new Counter({
      name: "protoscan_rpc_requests_total",
      help: "JSON-RPC requests by method and outcome (ok, rate_limited, range_too_large, transient, not_available, inconsistent, fatal)",
      labelNames: ["method", "outcome"] as const,
      registers: [registry],
    }),
    rpcComputeUnits: new Counter({
      name: "protoscan_rpc_compute_units_total",
      help: "Estimated provider compute units spent (Alchemy's price list)",
      registers: [registry],
    }),
    indexerHeadBlock,
    indexerIndexedBlock,
    indexerLagBlocks: new Gauge({
      name: "protoscan_indexer_lag_blocks",
      help: "Chain head minus the last fully indexed block, as last seen by the indexer of this process",
      registers: [registry],
      // Derived at scrape time from the two gauges above, so it can never disagree with them.
      async collect() {
        const head = (await indexerHeadBlock.get()).values[0]?.value;
        const indexed = (await indexerIndexedBlock.get()).values[0]?.value;
        if (head !== undefined && indexed !== undefined) this.set(Math.max(0, head - indexed));
      },
    }),
    indexerDeferredIndexes: new Gauge({
      name: "protoscan_indexer_deferred_indexes",
      help: "Secondary indexes a first backfill runs without, not built yet (API lists scan meanwhile); 0 once built",
      registers: [registry],
    }),
    ingestTransactions: new Counter({
      name: "protoscan_ingest_transactions_total",
      help: "Transactions stored by source (poll, webhook, track)",
      labelNames: ["source"] as const,
      registers: [registry],
    }),
    httpRequests: new Counter({
      name: "protoscan_http_requests_total",
      help: "HTTP requests answered, by method, route pattern (unmatched for unknown paths) and status code",
      labelNames: ["method", "route", "status"] as const,
      registers: [registry],
    }),
    httpRequestDuration: new Histogram({
      name: "protoscan_http_request_duration_seconds",
      help: "Time to answer HTTP requests, by method and route pattern",
      labelNames: ["method", "route"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: "protoscan_webhook_deliveries_total",
      help: "Webhook deliveries received, by provider and outcome (accepted, duplicate, invalid_signature, invalid_body, not_configured)",
      labelNames: ["provider", "outcome"] as const,
      registers: [registry],
    }),
    webhookProcessed: new Counter({
      name: "protoscan_webhook_processing_total",
      help: "Inbox processing attempts by outcome (done, retry, failed)",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
    priceLookups: new Counter({
      name: "protoscan_price_lookups_total",
      help: "Token price lookups by the tier that answered (memory, stored, api, dex, static, none)",
      labelNames: ["tier"] as const,
      registers: [registry],
    }),
    writerLockHeld: new Gauge({
      name: "protoscan_writer_lock_held",
      help: "1 while this process holds the single-writer lock (the active indexer), else 0",
      registers: [registry],
    }),
    writerLockChanges: new Counter({
      name: "protoscan_writer_lock_transitions_total",
      help: "Times this process took (acquired) or lost (lost) the single-writer lock",
      labelNames: ["event"] as const,
      registers: [registry],
    }),
    fanoutEvents: new Counter({
      name: "protoscan_fanout_events_total",
      help: "Events received from the PostgreSQL fan-out and handed to the WebSocket hub, by type",
      labelNames: ["type"] as const,
      registers: [registry],
    }),
    fanoutReconnects: new Counter({
      name: "protoscan_fanout_reconnects_total",
      help: "Times the PostgreSQL LISTEN connection was (re)established after a failure",
      registers: [registry],
    }),
    fanoutMissed: new Counter({
      name: "protoscan_fanout_missed_events_total",
      help: "Events pruned from the outbox before this process could deliver them (a listener down too long)",
      registers: [registry],
    }),
  };
}
