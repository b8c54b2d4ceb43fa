import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import type { FastifyRequest } from "fastify";
import Type from "typebox";
import type { Common } from "../../internal/common.ts";
import { insertDelivery } from "../../store/inbox.ts";
import { webhookProvider } from "../../webhooks/webhookProviders.ts";
import { type AppDeps, BODY_LIMIT, type RouteApp } from "../appDeps.ts";
import { ApiError } from "../errorRegistry.ts";
import { ProblemSchema } from "../schemas/common.ts";

const gunzipAsync = promisify(gunzip);

const WebhookAckSchema = Type.Object(
  {
    status: Type.Union([Type.Literal("accepted"), Type.Literal("duplicate")], {
      description: "`accepted`: stored, to be processed; `duplicate`: this delivery id was received before",
    }),
    deliveryId: Type.String({
      description: "the provider's delivery id (Alchemy `id`, QuickNode `x-qn-nonce`)",
    }),
  },
  {
    $id: "WebhookAck",
    description: "The delivery is stored in the inbox; its transactions are ingested next",
  },
);

const SignatureHeaders = Type.Object({
  "x-alchemy-signature": Type.Optional(
    Type.String({ description: "Alchemy: hex HMAC-SHA256 of the raw body with a signing key" }),
  ),
  "x-qn-signature": Type.Optional(
    Type.String({
      description: "QuickNode: hex HMAC-SHA256 of nonce + timestamp + body with a security token",
    }),
  ),
  "x-qn-nonce": Type.Optional(Type.String({ description: "QuickNode: the delivery's nonce (its id)" })),
  "x-qn-timestamp": Type.Optional(
    Type.String({ description: "QuickNode: Unix seconds; must be within 300 s of the server's clock" }),
  ),
});

/**
 * `POST /api/webhooks/:provider` (SPEC §3.2, §4 row 15): Alchemy Notify and QuickNode Streams deliveries.
 * The signature is checked first, over the raw body: this route lives in its own encapsulated plugin whose
 * content-type parser keeps the body as bytes (any content type; gzip is inflated first, QuickNode signs the
 * uncompressed JSON), so other routes keep the default JSON parser. A verified delivery is written to the
 * inbox and acknowledged at once; the inbox worker ingests its transactions. Unknown or unconfigured
 * provider: 404; bad or missing signature (or a stale QuickNode timestamp): 401, nothing stored.
 */
export function registerWebhookRoutes(app: RouteApp, common: Common, deps: AppDeps): void {
  const db = deps.database.db;

  void app.register(async (scope: RouteApp) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (request, body, done) => {
      rawText(request, body as Buffer).then(
        (text) => done(null, text),
        (error: unknown) => done(error as Error, undefined),
      );
    });

    scope.post(
      "/api/webhooks/:provider",
      {
        schema: {
          operationId: "receiveWebhook",
          summary: "Receive a signed Alchemy Notify or QuickNode Streams delivery",
          description:
            "Providers: `alchemy` (ADDRESS_ACTIVITY and GRAPHQL payloads, `X-Alchemy-Signature`) and `quicknode` " +
            "(Streams, `x-qn-signature` over nonce + timestamp + body, `x-qn-timestamp` within 300 s). " +
            "A provider without a `webhooks` config section answers 404. The body is the provider's JSON " +
            "exactly as sent (gzip accepted). A delivery id received before is acknowledged and not processed again.",
          tags: ["ingest"],
          params: Type.Object({
            provider: Type.String({ description: "`alchemy` or `quicknode`", examples: ["alchemy"] }),
          }),
          headers: SignatureHeaders,
          response: {
            200: WebhookAckSchema,
            400: ProblemSchema,
            401: ProblemSchema,
            404: ProblemSchema,
            413: ProblemSchema,
            415: ProblemSchema,
          },
        },
      },
      async (request) => {
        const { provider: name } = request.params;
        const provider = webhookProvider(name);
        const secrets = provider?.secrets(common.config) ?? null;
        // The provider label is one of the known names, never what the URL said.
        const count = (outcome: string) =>
          common.metrics.webhookDeliveries.inc({ provider: provider ? name : "unknown", outcome });
        if (!provider || !secrets) {
          count("not_configured");
          throw new ApiError(
            "NOT_FOUND",
            `no webhook receiver is configured for provider "${name.slice(0, 64)}"`,
          );
        }
        const rawBody = typeof request.body === "string" ? request.body : "";
        const verification = provider.verify({
          headers: request.headers,
          rawBody,
          secrets,
          nowMs: Date.now(),
        });
        if (!verification.ok) {
          request.log.warn({ provider: name, reason: verification.reason }, "webhook delivery refused");
          count("invalid_signature");
          throw new ApiError("INVALID_SIGNATURE", `${verification.reason}; nothing was stored`);
        }
        let payload: unknown;
        try {
          payload = JSON.parse(rawBody);
        } catch {
          count("invalid_body");
          throw new ApiError("INVALID_BODY", "body: is not valid JSON");
        }
        const deliveryId = provider.deliveryId({ headers: request.headers, payload, rawBody });
        const parsed = provider.parse(payload);
        if (parsed.error !== undefined) {
          request.log.warn({ provider: name, deliveryId, error: parsed.error }, "provider reported an error");
        }
        const { inserted } = await insertDelivery(db, { provider: name, deliveryId, rawBody });
        if (inserted) deps.inboxSignal?.notify();
        count(inserted ? "accepted" : "duplicate");
        return { status: inserted ? ("accepted" as const) : ("duplicate" as const), deliveryId };
      },
    );
  });
}

/** The body as text: inflated when gzip-encoded (bounded by the body limit), refused in other encodings. */
async function rawText(request: FastifyRequest, body: Buffer): Promise<string> {
  const encoding = String(request.headers["content-encoding"] ?? "identity")
    .trim()
    .toLowerCase();
  if (encoding === "identity" || encoding === "") return body.toString("utf8");
  if (encoding !== "gzip" && encoding !== "x-gzip") {
    throw new ApiError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Content-Encoding ${encoding.slice(0, 32)} is not supported; use gzip or none`,
    );
  }
  try {
    return (await gunzipAsync(body, { maxOutputLength: BODY_LIMIT })).toString("utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") {
      throw new ApiError("PAYLOAD_TOO_LARGE", "request body is larger than 1 MiB once inflated");
    }
    throw new ApiError("INVALID_BODY", "body: is not valid gzip");
  }
}
