import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { writeDemoConfig } from "../../src/demo/demoConfig.ts";
import { DATA_DIR_LOCK_FILE } from "../../src/store/dataDirLock.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { type CliProcess, spawnProtoscan } from "../helpers/processes.ts";

/** tsx compiling the sources on a loaded 2-core machine can take many seconds before protoscan listens. */
const STARTUP_MS = 90_000;

// PGlite only: DATA_DIR is what is shared (the test passes no DATABASE_URL, so it runs the same on both runs).
describe("two processes on one PGlite DATA_DIR", () => {
  let chain: DemoChain;
  let tmp: string;
  let configPath: string;
  const children: CliProcess[] = [];

  beforeAll(async () => {
    chain = await setupDemoChain();
    tmp = await mkdtemp(path.join(tmpdir(), "protoscan-lock-e2e-"));
    configPath = path.join(tmp, "protoscan.yaml");
    await writeDemoConfig(configPath, chain.configFile);
  });

  afterAll(async () => {
    for (const child of children) await child.stop();
    await chain?.anvil.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const start = (dataDir: string): CliProcess => {
    const child = spawnProtoscan(["start"], {
      PROTOSCAN_CONFIG: configPath,
      DATA_DIR: dataDir,
      PORT: "0",
      LOG_LEVEL: "info",
    });
    children.push(child);
    return child;
  };

  test("error: the second process is refused, naming the directory and the first; SIGKILL does not block the next", async () => {
    const dataDir = path.join(tmp, "data");
    const first = start(dataDir);
    const url = await first.listening(STARTUP_MS);

    const second = start(dataDir);
    const refused = await second.waitForExit(STARTUP_MS);
    expect(refused.code).toBe(1);
    expect(second.output()).toContain(
      `protoscan: DATA_DIR ${dataDir} is in use by another protoscan process (pid ${first.pid} on `,
    );
    // The first one was not disturbed.
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    // kill -9 leaves the lock file behind; the next start sees its pid is gone and takes over.
    first.signal("SIGKILL");
    await first.exited;
    expect(existsSync(path.join(dataDir, DATA_DIR_LOCK_FILE))).toBe(true);
    const third = start(dataDir);
    const thirdUrl = await third.listening(STARTUP_MS);
    expect((await fetch(`${thirdUrl}/readyz`)).status).toBe(200);

    // A graceful stop removes the lock file.
    third.signal("SIGTERM");
    expect((await third.waitForExit(30_000)).code).toBe(0);
    expect(existsSync(path.join(dataDir, DATA_DIR_LOCK_FILE))).toBe(false);
  }, 300_000);
});
