// @ts-check
/**
 * The Node options protoscan is started with: on the command line of `npm start`, `npm run demo` and
 * `npm run migrate` (and of `npm run bench:api`, whose process serves the API), in the process-manager
 * examples of docs/operations.md, and given by the benchmarks and tests that start protoscan.
 * `test/nodeFlags.test.ts` checks that package.json says the same as this list. `bin/protoscan.js` run as a
 * program (`npx protoscan`, a PATH install) keeps a plain `#!/usr/bin/env node` shebang: `env -S`, which
 * would pass options, is missing from BusyBox (Alpine images); there `NODE_OPTIONS` passes them.
 *
 * - `--max-semi-space-size=4`: V8's young generation at 4 MB per semi-space instead of up to 16. Short-lived
 *   objects are collected sooner, and the old generation's limit (which counts the young generation) is
 *   lower: a 10,000-transaction PGlite backfill peaked at 278-294 MB instead of 340-343, for about 5% more
 *   time (docs/performance.md, "Memory"). 2 MB took a first start through 5,054 transactions 13 MB lower
 *   again, but cost the API's cached answers 25-30% of their requests/s (`bench:api`, alternated; "First
 *   start"): not taken. Unlike the settings of `src/internal/tuneV8.ts`, V8 reads it only when the process
 *   starts, so it must be given to Node.
 * - `--single-threaded-gc`: V8 collects on the thread that allocates (the event loop, PGlite's worker) instead
 *   of handing marking, sweeping and scavenging to its pool of helper threads. On a machine of a few cores the
 *   helpers compete with those two threads for the same cores, and each parallel scavenge waits for all of its
 *   helpers: under 50 concurrent cold `GET /api/tx/:hash` (`bench:api` txCold, four rounds alternated on a
 *   2-core machine), the server's CPU per request fell from 255-326 µs to 245-292 (its other threads' part
 *   from 148-190 to 127-151), req/s rose 10-18%, and p99 went from 26-32 ms to 21-29. Heaps are small (tens
 *   of MB), so doing the work on one thread does not lengthen pauses much. The cost: a backfill's event loop
 *   does the collections itself, `npm start` through 20,000 transactions took 9.6-11.3 s to indexed instead
 *   of 9.3-10.2 (peak RSS and time to `/healthz` unchanged; docs/performance.md, "The 2026-11-28 second
 *   session").
 */
export const NODE_FLAGS = ["--max-semi-space-size=4", "--single-threaded-gc"];

/**
 * The environment the npm scripts start protoscan with, before `exec node …` (`exec`: npm's shell is replaced
 * by protoscan instead of waiting for it, one process less, and a signal npm forwards reaches protoscan).
 *
 * - `MALLOC_ARENA_MAX=2`: glibc's allocator keeps at most two arenas instead of up to eight per core. Each
 *   thread that allocates (the PGlite worker and V8's compiler and collector threads, libuv's pool) otherwise
 *   gets an arena of its own, and what they free stays resident in it: a PGlite `npm start` through a
 *   5,000-transaction backfill peaked 15-20 MB lower (docs/performance.md, "First start").
 * - `MALLOC_TRIM_THRESHOLD_=1048576`: free memory above 1 MiB at the top of a heap goes back to the system, and
 *   allocations of 128 KiB or more are mapped and unmapped on their own. By default glibc raises both limits
 *   to the size of the largest block freed so far (a response body, a COPY buffer), after which up to twice
 *   that stays resident: `protoscan start` through a 20,000-transaction backfill peaked at 264 MB (median of
 *   nine runs, without npm) instead of 285 (eight), the spread falling from 272-306 to 254-273 MB, in the same
 *   time.
 *
 * Other C libraries ignore both. Like the Node options, they must be there when the process starts.
 */
export const START_ENV = ["MALLOC_ARENA_MAX=2", "MALLOC_TRIM_THRESHOLD_=1048576"];
