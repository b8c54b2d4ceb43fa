import { loadConfig } from "../config/loadConfig.ts";
import { runDemo } from "../demo/runDemo.ts";
import { createLogger } from "../internal/logger.ts";
import { startProtoscan } from "./startProtoscan.ts";
import { untilSignal } from "./untilSignal.ts";

/**
 * `protoscan demo` (SPEC §1): anvil + demo protocols + protoscan on PGlite + live activity, until Ctrl-C.
 * The config the demo writes is loaded like any user's, so the demo exercises the real start-up path.
 */
export async function runDemoCommand(options: {
  host: string;
  port: number;
  dataDir: string;
  logLevel: string;
}): Promise<number> {
  const logger = createLogger({ level: options.logLevel });
  const demo = await runDemo({
    host: options.host,
    port: options.port,
    dataDir: options.dataDir,
    logger,
    startProtoscan: async (configPath) => {
      const config = await loadConfig({ path: configPath, env: {} });
      const protoscan = await startProtoscan({
        config,
        role: "all",
        host: options.host,
        port: options.port,
        dataDir: `${options.dataDir}/pglite`,
        logLevel: options.logLevel,
        logger,
      });
      return { url: protoscan.url ?? "", stop: () => protoscan.stop() };
    },
  });
  await untilSignal();
  logger.info("stopping the demo");
  await demo.stop();
  return 0;
}
