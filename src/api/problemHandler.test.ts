import { DrizzleQueryError } from "drizzle-orm/errors";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createLogger } from "../internal/logger.ts";
import { registerProblemHandler } from "./problemHandler.ts";

type Line = Record<string, unknown>;

/** A failed query as Drizzle throws it: the message quotes the statement and its parameters. */
const failedQuery = (message: string, code: string) =>
  new DrizzleQueryError(
    "select secret_column from t where x = $1",
    ["0xparam"],
    Object.assign(new Error(message), { code }),
  );

describe("registerProblemHandler: errors thrown by a route", () => {
  let app: FastifyInstance;
  const lines: Line[] = [];
  let thrown: unknown;

  beforeAll(async () => {
    const logger = createLogger({
      level: "debug",
      destination: { write: (line: string) => lines.push(JSON.parse(line) as Line) },
    });
    app = Fastify({ loggerInstance: logger as FastifyBaseLogger });
    registerProblemHandler(app);
    app.get("/fail", async () => {
      throw thrown;
    });
    await app.ready();
  });
  afterAll(() => app?.close());

  test("behavior: a passing database failure is 503 UPSTREAM_UNAVAILABLE, logged as a warning without the SQL", async () => {
    for (const [message, code] of [
      ["deadlock detected", "40P01"],
      ["canceling statement due to statement timeout", "57014"],
      ["Connection terminated unexpectedly", "ECONNRESET"],
    ] as const) {
      lines.length = 0;
      thrown = failedQuery(message, code);
      const response = await app.inject({ url: "/fail" });
      expect(response.statusCode, code).toBe(503);
      expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(response.json()).toEqual({
        type: "/docs/errors#UPSTREAM_UNAVAILABLE",
        title: "Upstream unavailable",
        status: 503,
        detail: "a database or node provider is unavailable; try again shortly",
        code: "UPSTREAM_UNAVAILABLE",
      });
      const logged = lines.filter((line) => line.msg === "upstream unavailable");
      expect(logged.map((line) => [line.level, line.err])).toEqual([[40, message]]);
      expect(JSON.stringify(lines)).not.toMatch(/secret_column|0xparam/);
    }
  });

  test("behavior: any other failure is 500 INTERNAL with a bare detail, logged as an error", async () => {
    lines.length = 0;
    thrown = failedQuery('relation "t" does not exist', "42P01");
    const response = await app.inject({ url: "/fail" });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toMatchObject({ code: "INTERNAL", detail: "internal error" });
    expect(response.body).not.toMatch(/secret_column|0xparam|does not exist/);
    expect(lines.filter((line) => line.msg === "unhandled error").map((line) => line.level)).toEqual([50]);
  });
});
