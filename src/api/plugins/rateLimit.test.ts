import Fastify from "fastify";
import { expect, test } from "vitest";
import { rateLimitKey, registerRateLimit } from "./rateLimit.ts";

test("default: the peer address, IPv6 grouped by /64 as the plugin does", () => {
  expect(rateLimitKey({ ip: "127.0.0.1" })).toBe("127.0.0.1");
  expect(rateLimitKey({ ip: "::ffff:10.0.0.7" })).toBe("10.0.0.7");
  expect(rateLimitKey({ ip: "2001:db8:1:2:aaaa::1" })).toBe(rateLimitKey({ ip: "2001:db8:1:2:bbbb::9" }));
  expect(rateLimitKey({ ip: "2001:db8:1:2::1" })).not.toBe(rateLimitKey({ ip: "2001:db8:1:3::1" }));
});

test("behavior: a client gone before the rate limit runs is no server error", async () => {
  const app = Fastify();
  const errors: unknown[] = [];
  const handled: string[] = [];
  app.setErrorHandler((error, _request, reply) => {
    errors.push(error);
    return reply.code(500).send();
  });
  // Hang up on the client before the route's rate-limit hook runs, as a client that timed out does.
  app.addHook("onRequest", async (request) => {
    const socket = request.raw.socket;
    const closed = new Promise((resolve) => socket.once("close", resolve));
    socket.destroy();
    await closed;
  });
  await registerRateLimit(app, {
    rateLimitPerMinute: 10,
    corsOrigins: [],
    trackTxApiKeys: [],
    etherscanApiKeys: [],
  });
  app.get("/x", async (request) => {
    handled.push(String(request.ip));
    return { ok: true };
  });
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  try {
    await expect(fetch(`${url}/x`)).rejects.toThrow();
    await expect.poll(() => handled, { timeout: 10_000 }).toEqual(["undefined"]);
    expect(errors).toEqual([]);
  } finally {
    await app.close();
  }
});
