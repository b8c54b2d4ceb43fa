import type { FastifyInstance } from "fastify";

/**
 * Echo the request id (the client's `X-Request-Id`, or Fastify's own) on every response, errors included, so
 * a client can quote it and an operator can find the matching log lines.
 */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    done();
  });
}
