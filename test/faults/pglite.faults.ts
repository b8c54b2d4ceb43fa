import { describe } from "vitest";
import { faultSeeds } from "./seeds.ts";

// Issue 8 item 1 on embedded PGlite (on disk: the writer is a real process that gets SIGKILLed).
describe("fault simulation on PGlite", () => faultSeeds("pglite"));
