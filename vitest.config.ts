import { defineConfig } from "vitest/config";

// Tests run against real anvil nodes and real databases (PGlite by default, PostgreSQL when DATABASE_URL
// is set), so they get generous timeouts and at most two files in parallel on this 2-core machine.
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "bench/**/*.test.ts", "web/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
