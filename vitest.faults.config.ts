import { defineConfig } from "vitest/config";

// `npm run test:faults` (issue 8): the seeded fault simulation, kept out of `npm test`. One file per
// database, run side by side; each seed is one test that prints its figures.
export default defineConfig({
  test: {
    include: ["test/faults/*.faults.ts"],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
