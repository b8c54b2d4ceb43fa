import { Worker } from "node:worker_threads";
import { describe, expect, test } from "vitest";
import { eventLoopCpuMicros } from "./eventLoopCpu.ts";

/** Busy until the process has used `ms` more CPU time (wall time would stretch on a shared, busy machine). */
function spin(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if (used.user + used.system >= ms * 1000) return;
  }
}

describe("eventLoopCpuMicros", () => {
  test("counts the main thread's CPU time, not another thread's", async () => {
    const before = eventLoopCpuMicros();
    expect(before).not.toBeNull();
    // another thread spins 400 ms while this one waits for it
    const worker = new Worker(
      `(${spin.toString()})(400); require("node:worker_threads").parentPort.postMessage("done");`,
      { eval: true },
    );
    await new Promise((resolve) => worker.once("message", resolve));
    await worker.terminate();
    const waited = eventLoopCpuMicros()! - before!;
    // then this thread spins 400 ms
    spin(400);
    const spun = eventLoopCpuMicros()! - before! - waited;
    // clock ticks of 10 ms; the process's other threads (V8's, libuv's) use a little CPU of their own
    expect(waited).toBeLessThan(150_000);
    expect(spun).toBeGreaterThan(300_000);
    expect(spun).toBeLessThan(450_000);
  });
});
