/**
 * Send statements one after another without waiting for each answer, then wait for all of them: a pipeline.
 * The functions are called in order, and each must have sent its statement when it returns. A Drizzle query
 * or `db.execute(…)` is sent when it is awaited, which is a microtask later, after the next function's: call
 * its `.execute()` (insertRows, copyRows and storedHashes do). A function that sends more than one statement,
 * awaiting each, goes last, or its later statements are sent after the next function's. Returns the results
 * in order.
 *
 * Why: on PGlite a commit's statements were about twenty round trips to its worker thread, and each answer
 * waited for the event loop, busy decoding the next group: the worker sat idle for 1.3 s of a 4 s backfill
 * (docs/performance.md, "Indexer backfill"). Statements sent together queue in the worker (or go out at once
 * on a node-postgres client in pipeline mode: createDatabase.ts) and run back to back, in the order sent.
 *
 * Every statement has settled before this returns or throws: none outlives the caller's transaction, and
 * none fails unobserved. The error thrown is the first in statement order (a function that throws before
 * sending counts as its statement): in a transaction the statements after a failed one fail only because it
 * did ("current transaction is aborted"), so the first is the cause. Functions after one that throws are not
 * called.
 */
export async function sendTogether<Sends extends readonly (() => unknown)[]>(
  ...sends: Sends
): Promise<{ -readonly [K in keyof Sends]: Awaited<ReturnType<Sends[K]>> }> {
  const sent: Promise<unknown>[] = [];
  for (const send of sends) {
    try {
      sent.push(Promise.resolve(send()));
    } catch (error) {
      sent.push(Promise.reject(error));
      break;
    }
  }
  const settled = await Promise.allSettled(sent);
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof Sends]: Awaited<ReturnType<Sends[K]>>;
  };
}
