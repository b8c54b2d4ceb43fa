import Fastify from "fastify";
import { describe, expect, test } from "vitest";
import { createRouteIndex, routePattern } from "./routeIndex.ts";

describe("routePattern", () => {
  test("default: parameters match one segment", () => {
    const pattern = routePattern("/api/tokens/:address/holders");
    expect(pattern.test("/api/tokens/0xabc/holders")).toBe(true);
    expect(pattern.test("/api/tokens/0xabc/holders/")).toBe(false);
    expect(pattern.test("/api/tokens/a/b/holders")).toBe(false);
    expect(pattern.test("/api/tokens//holders")).toBe(false);
  });

  test("args: wildcards, regexp parameters and literal dots", () => {
    expect(routePattern("/docs/static/*").test("/docs/static/a/b.js")).toBe(true);
    expect(routePattern("/docs/*").test("/doc")).toBe(false);
    expect(routePattern("/api/block/:n(^\\d+)").test("/api/block/12")).toBe(true);
    expect(routePattern("/openapi.json").test("/openapiXjson")).toBe(false);
  });
});

describe("createRouteIndex", () => {
  test("default: methods of every route matching a path, HEAD included", async () => {
    const app = Fastify();
    const index = createRouteIndex(app);
    app.get("/api/tx/:hash", async () => ({}));
    app.post("/api/track-tx", async () => ({}));
    app.options("*", async () => ({}));
    await app.ready();
    expect(index.allowedMethods("/api/tx/0x12")).toEqual(["GET", "HEAD"]);
    expect(index.allowedMethods("/api/track-tx")).toEqual(["POST"]);
    expect(index.allowedMethods("/api/nothing")).toEqual([]);
    await app.close();
  });
});
