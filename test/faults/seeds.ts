import { afterAll, expect, test } from "vitest";
import {
  type FaultDatabase,
  formatReport,
  formatTotals,
  removePgliteTemplate,
  runSeed,
  type SeedReport,
} from "./simulation.ts";

/**
 * The seeds of `npm run test:faults` and their knobs (docs/development.md "Fault simulation"):
 * - FAULT_SEED: replay this one seed (on the database it maps to, unless FAULT_DB says otherwise);
 * - FAULT_SEEDS: how many seeds (default 20: FAULT_FIRST_SEED, FAULT_FIRST_SEED + 1, …);
 * - FAULT_FIRST_SEED: the first seed (default 1);
 * - FAULT_TXS: transactions mined per seed (default 150);
 * - FAULT_DB: `pglite` or `postgres` runs every seed on that database (default: odd seeds on PGlite, even
 *   seeds on PostgreSQL);
 * - FAULT_DATABASE_URL: the PostgreSQL server (default DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test);
 * - FAULT_INCONSISTENT=0: leave out the self-contradicting RPC answers (served by default).
 */
const env = process.env;
const number = (name: string, fallback: number) => {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
};

const forced = env.FAULT_DB === "pglite" || env.FAULT_DB === "postgres" ? env.FAULT_DB : undefined;
const databaseOf = (seed: number): FaultDatabase => forced ?? (seed % 2 === 1 ? "pglite" : "postgres");
const first = number("FAULT_FIRST_SEED", 1);
const seeds =
  env.FAULT_SEED !== undefined && env.FAULT_SEED !== ""
    ? [number("FAULT_SEED", 1)]
    : Array.from({ length: number("FAULT_SEEDS", 20) }, (_, i) => first + i);
const transactions = number("FAULT_TXS", 150);
const serverUrl = env.FAULT_DATABASE_URL || env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
const inconsistent = env.FAULT_INCONSISTENT !== "0";

/** One vitest test per seed of `database`, each printing its figures, and on failure how to replay it. */
export function faultSeeds(database: FaultDatabase): void {
  const mine = seeds.filter((seed) => databaseOf(seed) === database);
  if (mine.length === 0) {
    test.skip(`no ${database} seed selected`, () => undefined);
    return;
  }
  const reports: SeedReport[] = [];
  afterAll(async () => {
    if (reports.length > 0) console.log(formatTotals(reports));
    await removePgliteTemplate();
  });
  for (const seed of mine) {
    test(`seed ${seed}: the store equals the chain and every acknowledged delivery is done`, async () => {
      const report = await runSeed({ seed, database, transactions, serverUrl, inconsistent });
      reports.push(report);
      console.log(formatReport(report));
      const replay = [
        `FAULT_SEED=${seed}`,
        ...(forced ? [`FAULT_DB=${forced}`] : []),
        ...(transactions !== 150 ? [`FAULT_TXS=${transactions}`] : []),
        ...(inconsistent ? [] : ["FAULT_INCONSISTENT=0"]),
        "npm run test:faults",
      ].join(" ");
      if (report.mismatches.length > 0) console.log(`seed ${seed} FAILED; replay: ${replay}`);
      expect(report.mismatches.slice(0, 20), `seed ${seed} [${database}]; replay: ${replay}`).toEqual([]);
    }, 600_000);
  }
}
