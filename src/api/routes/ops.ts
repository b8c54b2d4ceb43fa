import type { FastifyInstance } from "fastify";
import Type from "typebox";
import type { Common } from "../../internal/common.ts";
import { errorMessage } from "../../internal/errors.ts";
import type { WriterLock } from "../../store/createWriterLock.ts";
import { pendingMigrations } from "../../store/migrate.ts";
import { pingDatabase } from "../../store/pingDatabase.ts";
import type { AppDeps } from "../appDeps.ts";
import { problem } from "../errorRegistry.ts";

const CheckSchema = Type.Object({ ok: Type.Boolean(), detail: Type.Optional(Type.String()) });
const ChecksSchema = Type.Object({
  database: CheckSchema,
  rpc: CheckSchema,
  migrations: CheckSchema,
  indexer: Type.Optional(
    Type.Object(
      { ok: Type.Boolean(), detail: Type.Optional(Type.String()) },
      {
        description:
          "Present when the indexer of this process stopped for good (the database belongs to another " +
          "chain): ok is false and detail says why; the process exits right after",
      },
    ),
  ),
  writerLock: Type.Optional(
    Type.Object(
      { ok: Type.Boolean(), detail: Type.Optional(Type.String()) },
      {
        description:
          "Processes that run the writers (roles all and indexer on PostgreSQL): whether the session that " +
          "holds or waits for the single-writer lock is connected",
      },
    ),
  ),
});
const WriterSchema = Type.Object(
  {
    held: Type.Boolean({ description: "this process holds the lock: it is the active writer" }),
    since: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "when it took the lock",
    }),
  },
  { description: "Single-writer election (SPEC §9), in processes that run the writers on PostgreSQL" },
);
const ReadySchema = Type.Object({
  status: Type.Literal("ready"),
  checks: ChecksSchema,
  writer: Type.Optional(WriterSchema),
});
/** A 503 is problem+json like every other 5xx, with the checks as an extension member (RFC 9457 §3.2). */
const NotReadySchema = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Literal(503),
  detail: Type.String(),
  code: Type.Literal("UPSTREAM_UNAVAILABLE"),
  checks: ChecksSchema,
  writer: Type.Optional(WriterSchema),
});

/** What the operational routes read: the API's deps, or the few an `--role indexer` ops server has. */
export type OpsDeps = Pick<AppDeps, "database" | "chain" | "indexerStatus"> & {
  /** the single-writer election of this process (PostgreSQL, roles all and indexer) */
  writerLock?: Pick<WriterLock, "status">;
};

/**
 * `/healthz` (process up), `/readyz` (database, RPC and migrations, and the writer-lock session where there is
 * one; 503 when any fails) and `/metrics` (Prometheus text of `common.metrics.registry`; not in the OpenAPI
 * document, which describes JSON, see docs/operations.md).
 */
export function registerOpsRoutes(app: FastifyInstance, common: Common, deps: OpsDeps) {
  app.get(
    "/healthz",
    {
      schema: {
        operationId: "getHealth",
        summary: "Liveness: the process is up",
        tags: ["operations"],
        response: { 200: Type.Object({ status: Type.Literal("ok") }) },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  app.get(
    "/readyz",
    {
      schema: {
        operationId: "getReadiness",
        summary: "Readiness: database and RPC reachable, migrations applied",
        tags: ["operations"],
        response: {
          200: ReadySchema,
          503: {
            description: "Not ready: a check failed",
            content: { "application/problem+json": { schema: NotReadySchema } },
          },
        },
      },
    },
    async (_request, reply) => {
      const [database, rpc, migrations] = await Promise.all([
        check(() => pingDatabase(deps.database)),
        check(() => deps.chain.client.getBlockNumber({ cacheTime: 0 })),
        check(async () => {
          const pending = await pendingMigrations(deps.database);
          if (pending > 0) throw new Error(`${pending} migrations pending`);
        }),
      ]);
      const lock = deps.writerLock?.status();
      const failure = deps.indexerStatus?.().failure;
      const checks = {
        database,
        rpc,
        migrations,
        ...(failure ? { indexer: { ok: false, detail: failure } } : {}),
        ...(lock
          ? {
              writerLock: lock.connected
                ? { ok: true, detail: lock.held ? "active writer" : "standby" }
                : { ok: false, detail: "the writer-lock session is not connected" },
            }
          : {}),
      };
      const writer = lock ? { writer: { held: lock.held, since: lock.since?.toISOString() ?? null } } : {};
      const failing = Object.entries(checks)
        .filter(([, c]) => !c.ok)
        .map(([name]) => name);
      if (failing.length === 0) return { status: "ready" as const, checks, ...writer };
      return reply
        .code(503)
        .type("application/problem+json")
        .send({
          ...problem("UPSTREAM_UNAVAILABLE", `not ready: ${failing.join(", ")} failing`),
          checks,
          ...writer,
        });
    },
  );

  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
    const text = await common.metrics.registry.metrics();
    return reply.type(common.metrics.registry.contentType).send(text);
  });
}

async function check(fn: () => Promise<unknown>): Promise<{ ok: boolean; detail?: string }> {
  try {
    await fn();
    return { ok: true };
  } catch (error) {
    // Messages from our error classes are already free of URLs and credentials.
    return { ok: false, detail: errorMessage(error).split("\n")[0]! };
  }
}
