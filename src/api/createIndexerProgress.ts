import type { FastifyInstance } from "fastify";
import { CURSOR_NAME, getCursor } from "../store/indexerState.ts";
import type { RouteDeps } from "./appDeps.ts";
import { createEventCache, readThrough } from "./cache/createEventCache.ts";
import { createTtlCache } from "./cache/createTtlCache.ts";
import type { IndexerJson } from "./schemas/stats.ts";

const HEAD_CACHE_MS = 5000;

/**
 * The `indexer` section of `/api/stats` and `/api/overview`. In a process that runs the polling indexer it
 * is the indexer's own status; in an `--role api` process it is the committed cursor (and the time it last
 * advanced as `lastRunAt`) with the node's head, read at most every 5 s and null while the node is down. The
 * cursor is kept until its change notice (migration 0009) when the app has events and notices.
 */
export function createIndexerProgress(
  app: FastifyInstance,
  deps: Pick<RouteDeps, "indexerStatus" | "database" | "chain" | "events" | "changes">,
): () => Promise<IndexerJson> {
  const head = createTtlCache<"head", number | null>({ ttlMs: HEAD_CACHE_MS });
  const readHead = () =>
    head.get("head", async () => {
      try {
        return Number(await deps.chain.client.getBlockNumber({ cacheTime: 0 }));
      } catch {
        return null;
      }
    });

  const cursors = createEventCache<Awaited<ReturnType<typeof getCursor>>>(app, deps.events, {
    maxEntries: 1,
    emptiedBy: "removed",
    alsoChangedBy: { notices: deps.changes, tables: ["indexer_cursor"] },
  });

  return async () => {
    const status = deps.indexerStatus?.();
    const cursor =
      status?.indexedBlock === null || status?.indexedBlock === undefined
        ? await readThrough(cursors, CURSOR_NAME, () => getCursor(deps.database.db, CURSOR_NAME))
        : null;
    const indexedBlock = status?.indexedBlock ?? cursor?.blockNumber ?? null;
    const chainHead = status?.chainHead ?? (await readHead());
    const lastRunAt = status ? status.lastRunAt : (cursor?.updatedAt ?? null);
    return {
      chainHead,
      indexedBlock,
      lagBlocks: chainHead !== null && indexedBlock !== null ? Math.max(0, chainHead - indexedBlock) : null,
      lastRunAt: lastRunAt?.toISOString() ?? null,
    };
  };
}
