import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { loadConfig } from "../config/loadConfig.ts";
import { runDemo } from "../demo/runDemo.ts";
import { type DataDirLock, lockDataDir } from "../store/dataDirLock.ts";
import type { TerminalFace } from "./createTerminalFace.ts";
import { startProtoscan } from "./startProtoscan.ts";
import { untilSignal } from "./untilSignal.ts";

/**
 * `protoscan demo` (SPEC §1): anvil + demo protocols + protoscan on PGlite + live activity, until Ctrl-C.
 * The config the demo writes is loaded like any user's, so the demo exercises the real start-up path.
 *
 * Each run starts a new anvil chain, so the PGlite database of an earlier run (`DATA_DIR/pglite`) belongs to
 * another chain: it is emptied before protoscan starts, under a lock on `DATA_DIR` so that a second demo on
 * the same directory is refused instead of emptying the first one's database.
 */
export async function runDemoCommand(options: {
  host: string;
  port: number;
  dataDir: string;
  logLevel: string;
  /** how logs and the progress line are shown (createTerminalFace.ts) */
  face: TerminalFace;
}): Promise<number> {
  const logger = options.face.logger({ level: options.logLevel });
  const persistent = !options.dataDir.startsWith("memory://");
  const pgliteDir = `${options.dataDir}/pglite`;
  let lock: DataDirLock | undefined;
  if (persistent) {
    await mkdir(options.dataDir, { recursive: true });
    lock = await lockDataDir(path.resolve(options.dataDir));
  }
  try {
    const demo = await runDemo({
      host: options.host,
      port: options.port,
      dataDir: options.dataDir,
      logger,
      startProtoscan: async (configPath) => {
        if (persistent) await rm(pgliteDir, { recursive: true, force: true });
        const config = await loadConfig({ path: configPath, env: {} });
        const protoscan = await startProtoscan({
          config,
          role: "all",
          host: options.host,
          port: options.port,
          dataDir: pgliteDir,
          logLevel: options.logLevel,
          logger,
          ...(options.face.terminal ? { progress: options.face.terminal } : {}),
        });
        return { url: protoscan.url ?? "", stop: () => protoscan.stop() };
      },
    });
    await untilSignal();
    logger.info("stopping the demo");
    await demo.stop();
    return 0;
  } finally {
    await lock?.release();
  }
}
