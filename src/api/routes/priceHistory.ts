import Type from "typebox";
import type { Common } from "../../internal/common.ts";
import type { RouteApp, RouteDeps } from "../appDeps.ts";
import { ApiError } from "../errorRegistry.ts";
import { bucketMs, HistoryQuerySchema, historyBuckets, parseHistoryRange } from "../historyRange.ts";
import { AddressParam, ProblemSchema } from "../schemas/common.ts";
import { type PriceHistoryJson, PriceHistorySchema } from "../schemas/priceHistory.ts";
import { checksum } from "../toTransactionJson.ts";

/**
 * `GET /api/tokens/:address/price-history?interval&from&to` (SPEC §10.1): one point per UTC hour or day, the
 * price in effect at the bucket's end (its last millisecond; now for the current bucket) by the tier order
 * at a past time (prices/createPriceHistory.ts), all buckets priced with one `pricesAt` call. A bucket that
 * starts after now has no price yet (null).
 */
export function registerPriceHistoryRoutes(app: RouteApp, common: Common, deps: RouteDeps) {
  const tracked = new Set(common.config.tokens.map((t) => t.address as string));

  app.get(
    "/api/tokens/:address/price-history",
    {
      schema: {
        operationId: "getTokenPriceHistory",
        summary: "A tracked token's USD price per hour or day, with the tier that priced each bucket",
        tags: ["tokens"],
        params: Type.Object({ address: AddressParam }),
        querystring: HistoryQuerySchema,
        response: { 200: PriceHistorySchema, 400: ProblemSchema, 404: ProblemSchema },
      },
    },
    async (request): Promise<PriceHistoryJson> => {
      const address = request.params.address.toLowerCase();
      if (!tracked.has(address)) {
        throw new ApiError("TOKEN_NOT_TRACKED", `${checksum(address)} is not a tracked token`);
      }
      const now = new Date();
      const range = parseHistoryRange(request.query, now);
      const size = bucketMs(range.interval);
      const buckets = historyBuckets(range);
      const asked = buckets
        .map((start) => new Date(Math.min(start.getTime() + size - 1, now.getTime())))
        .filter((end, i) => end.getTime() >= buckets[i]!.getTime());
      const prices = await deps.history.pricesAt(asked.map((time) => ({ token: address, time })));
      return {
        token: checksum(address),
        interval: range.interval,
        from: range.from.toISOString(),
        to: range.to.toISOString(),
        points: buckets.map((start, i) => {
          const price = i < prices.length ? prices[i] : null;
          return { time: start.toISOString(), priceUsd: price?.usd ?? null, source: price?.source ?? null };
        }),
      };
    },
  );
}
