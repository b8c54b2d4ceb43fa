import type { Ingest } from "../ingest/createIngest.ts";
import { createBackgroundLoop } from "../internal/backgroundLoop.ts";
import { type BackoffOptions, backoffDelay } from "../internal/backoffDelay.ts";
import type { Common } from "../internal/common.ts";
import { errorMessage, RetryableError } from "../internal/errors.ts";
import type { Db } from "../store/createDatabase.ts";
import {
  type ClaimedDelivery,
  claimNextDelivery,
  completeDelivery,
  failDelivery,
  retryDelivery,
} from "../store/inbox.ts";
import { createInboxSignal, type InboxSignal } from "./inboxSignal.ts";
import { webhookProvider } from "./webhookProviders.ts";

export type InboxWorkerOptions = {
  /** How often the table is polled for deliveries stored by other processes or due for a retry. */
  pollIntervalMs: number;
  /** How long a claimed delivery is held; a worker that dies lets it lapse and another takes the delivery. */
  leaseMs: number;
  /**
   * Waits before re-checking a delivery whose transactions the node does not know as mined yet (the
   * provider's node can be a block ahead of ours). When they run out the delivery is marked `failed`.
   */
  pendingRetryDelaysMs: readonly number[];
  /** Backoff between attempts that failed with an error (node or database unavailable…). */
  errorBackoff: BackoffOptions;
  /** Attempts after which a delivery failing with a non-retryable error is marked `failed`. */
  maxAttempts: number;
};

export const DEFAULT_INBOX_WORKER_OPTIONS: InboxWorkerOptions = {
  pollIntervalMs: 250,
  leaseMs: 60_000,
  pendingRetryDelaysMs: [1_000, 2_000, 4_000, 8_000, 15_000, 30_000],
  errorBackoff: { baseMs: 1_000, maxMs: 300_000 },
  maxAttempts: 10,
};

/** What became of one delivery in one attempt. */
export type DeliveryOutcome = "done" | "retry" | "failed";

/**
 * Drains the durable webhook inbox (SPEC §3.2): deliveries are taken oldest first, their transaction hashes
 * go through the one ingest pipeline (`ingest.ingestHashes(hashes, "webhook")`, which stores and broadcasts),
 * and the delivery is marked done. Irrelevant transactions are ignored and the delivery still counts as
 * processed. Hashes the node does not know as mined yet are re-checked a few times; a failed attempt is
 * retried with backoff (forever while the failure is retryable), so no delivery is lost. The worker picks up
 * whatever is pending when it starts: deliveries acknowledged before a crash are processed after the restart.
 */
export type InboxWorker = {
  start(): void;
  stop(): Promise<void>;
  /** Process every delivery due now, one at a time; resolves with how many attempts were made. */
  drain(): Promise<number>;
};

export function createInboxWorker(
  common: Common,
  deps: { db: Db; ingest: Ingest; signal?: InboxSignal },
  overrides: Partial<InboxWorkerOptions> = {},
): InboxWorker {
  const { db, ingest } = deps;
  const { logger } = common;
  const options: InboxWorkerOptions = { ...DEFAULT_INBOX_WORKER_OPTIONS, ...overrides };
  const signal = deps.signal ?? createInboxSignal();
  // Stopped by stop() or the shutdown: the writers are built afresh each time this process wins the writer lock.
  const background = createBackgroundLoop(common.shutdown);

  const handle = async (delivery: ClaimedDelivery): Promise<DeliveryOutcome> => {
    const { id, attempts } = delivery;
    const log = { provider: delivery.provider, deliveryId: delivery.deliveryId, inboxId: id, attempts };
    const provider = webhookProvider(delivery.provider);
    if (!provider) {
      await failDelivery(db, id, `unknown provider "${delivery.provider}"`);
      return "failed";
    }
    let payload: unknown;
    try {
      payload = JSON.parse(delivery.rawBody);
    } catch {
      await failDelivery(db, id, "the stored body is not JSON");
      return "failed";
    }
    const parsed = provider.parse(payload);
    if (parsed.hashes.length === 0) {
      await completeDelivery(
        db,
        id,
        parsed.error ? `provider error: ${parsed.error}` : "no transaction hashes",
      );
      return "done";
    }

    let outcomes: Awaited<ReturnType<Ingest["ingestHashes"]>>;
    try {
      outcomes = await ingest.ingestHashes(parsed.hashes, "webhook");
    } catch (error) {
      const message = errorMessage(error);
      if (error instanceof RetryableError || attempts < options.maxAttempts) {
        const delay = Math.max(options.errorBackoff.baseMs, backoffDelay(attempts, options.errorBackoff));
        logger.warn({ ...log, err: message, retryInMs: delay }, "webhook delivery failed; will retry");
        await retryDelivery(db, id, delay, message);
        return "retry";
      }
      logger.error({ ...log, err: message }, "webhook delivery failed; giving up");
      await failDelivery(db, id, message);
      return "failed";
    }

    const pending = outcomes.filter((o) => o.status === "pending").map((o) => o.hash);
    const irrelevant = outcomes.filter((o) => o.status === "not_relevant").length;
    const stored = outcomes.filter((o) => o.status === "indexed" && o.inserted).length;
    if (pending.length > 0) {
      const note = `${pending.length} transaction(s) not mined yet: ${pending.slice(0, 5).join(", ")}`;
      const delay = options.pendingRetryDelaysMs[attempts - 1];
      if (delay !== undefined) {
        logger.debug(
          { ...log, pending: pending.length, retryInMs: delay },
          "webhook transactions not mined yet",
        );
        await retryDelivery(db, id, delay, note);
        return "retry";
      }
      logger.warn({ ...log, pending: pending.length }, "webhook transactions never seen mined; giving up");
      await failDelivery(db, id, `${note} (after ${attempts} attempts)`);
      return "failed";
    }
    await completeDelivery(
      db,
      id,
      irrelevant > 0 ? `${irrelevant} transaction(s) touch no configured contract or token: ignored` : null,
    );
    logger[stored > 0 ? "info" : "debug"](
      { ...log, hashes: parsed.hashes.length, stored, irrelevant },
      "webhook delivery processed",
    );
    return "done";
  };

  const drain = async (): Promise<number> => {
    let count = 0;
    while (!background.signal.aborted) {
      const delivery = await claimNextDelivery(db, options.leaseMs);
      if (!delivery) break;
      common.metrics.webhookProcessed.inc({ outcome: await handle(delivery) });
      count++;
    }
    return count;
  };

  return {
    start() {
      background.start(async (abort) => {
        let failures = 0;
        while (!abort.aborted) {
          try {
            const count = await drain();
            failures = 0;
            if (count === 0) await signal.wait(options.pollIntervalMs, abort);
          } catch (error) {
            // The database (or a settle query) failed: the claimed delivery's lease lapses and it is retried.
            failures++;
            const delay = backoffDelay(failures, { baseMs: options.pollIntervalMs, maxMs: 10_000 });
            logger.warn(
              { err: errorMessage(error), retryInMs: delay },
              "webhook inbox worker: attempt failed",
            );
            await signal.wait(delay, abort);
          }
        }
      });
    },
    stop: () => background.stop(),
    drain,
  };
}
