import { describe } from "vitest";
import { faultSeeds } from "./seeds.ts";

// Issue 8 item 1 on PostgreSQL: a fresh database per seed, behind a TCP proxy that plays server restarts.
describe("fault simulation on PostgreSQL", () => faultSeeds("postgres"));
