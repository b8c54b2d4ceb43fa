import fastifyWebsocket from "@fastify/websocket";
import type { FastifyInstance } from "fastify";
import type { Common } from "../../internal/common.ts";
import { errorMessage } from "../../internal/errors.ts";
import { CLOSE_CODES, type HubSocket } from "../../realtime/createHub.ts";
import type { AppDeps } from "../appDeps.ts";
import { ApiError } from "../errorRegistry.ts";

/**
 * Frames between 16 KiB and this size are read and answered with a `FRAME_TOO_LARGE` error (the socket stays
 * open); larger ones are refused by `ws` while they arrive, with close code 1009 (docs/websocket.md).
 */
export const HARD_FRAME_LIMIT_BYTES = 64 * 1024;

/**
 * `GET /ws` (SPEC §5): the WebSocket upgrade goes through the normal route pipeline (request id, rate limit)
 * and the connection is handed to the hub of `deps.hub`; without a hub (an app built for HTTP tests) there
 * is no route. A plain HTTP GET is a 400 problem. On close every socket gets 1001 before the plugin's own
 * `preClose` (hooks run in the order they were added) would close it without a code.
 */
export async function registerWebSocketRoute(
  app: FastifyInstance,
  common: Common,
  deps: AppDeps,
): Promise<void> {
  const hub = deps.hub;
  if (!hub) return;
  app.addHook("preClose", async () => {
    hub.closeAll(CLOSE_CODES.goingAway, "server shutting down");
  });
  await app.register(fastifyWebsocket, {
    options: { maxPayload: HARD_FRAME_LIMIT_BYTES, perMessageDeflate: false },
    // `ws` already closes the socket on a protocol error (1002, 1007, 1009); the client caused it, so it
    // is not an error of ours. Errors thrown by the handler cannot happen (attach does not throw).
    errorHandler(error) {
      common.logger.debug({ err: errorMessage(error) }, "websocket connection error");
    },
  });
  app.route({
    method: "GET",
    url: "/ws",
    schema: { hide: true },
    handler: async () => {
      throw new ApiError(
        "BAD_REQUEST",
        "GET /ws is a WebSocket endpoint: send an Upgrade: websocket request",
      );
    },
    wsHandler: (socket, request) => {
      // request.socket is the upgraded TCP socket under the WebSocket: the hub corks it per broadcast slice.
      hub.attach(socket as HubSocket, { ip: request.ip, transport: request.socket });
    },
  });
}
