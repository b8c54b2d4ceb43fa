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
 *   time (docs/performance.md, "Memory"). Unlike the settings of `src/internal/tuneV8.ts`, V8 reads it only
 *   when the process starts, so it must be given to Node.
 */
export const NODE_FLAGS = ["--max-semi-space-size=4"];
