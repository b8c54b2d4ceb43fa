import { Counter, Gauge, type Registry } from "prom-client";

/** Why the hub ended a connection (a label value). */
export type DisconnectReason = "slow" | "heartbeat" | "shutdown";

export type HubMetrics = ReturnType<typeof createHubMetrics>;

/**
 * The WebSocket hub's Prometheus series, on the process registry of `common.metrics`. A second hub on the
 * same registry (tests) reuses the series instead of failing on a duplicate name.
 */
export function createHubMetrics(registry: Registry) {
  return {
    connections:
      existing<Gauge>(registry, "protoscan_ws_connections") ??
      new Gauge({
        name: "protoscan_ws_connections",
        help: "Open WebSocket connections on /ws",
        registers: [registry],
      }),
    messages:
      existing<Counter<"type">>(registry, "protoscan_ws_messages_sent_total") ??
      new Counter({
        name: "protoscan_ws_messages_sent_total",
        help: "WebSocket messages sent, by type (transaction, removed, reply)",
        labelNames: ["type"] as const,
        registers: [registry],
      }),
    disconnects:
      existing<Counter<"reason">>(registry, "protoscan_ws_disconnects_total") ??
      new Counter({
        name: "protoscan_ws_disconnects_total",
        help: "WebSocket connections the server ended, by reason (slow, heartbeat, shutdown)",
        labelNames: ["reason"] as const,
        registers: [registry],
      }),
    clientErrors:
      existing<Counter<"code">>(registry, "protoscan_ws_client_errors_total") ??
      new Counter({
        name: "protoscan_ws_client_errors_total",
        help: "Bad client frames answered with an error message, by code",
        labelNames: ["code"] as const,
        registers: [registry],
      }),
  };
}

function existing<T>(registry: Registry, name: string): T | undefined {
  return registry.getSingleMetric(name) as T | undefined;
}
