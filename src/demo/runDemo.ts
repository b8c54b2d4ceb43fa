import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { getAddress } from "viem";
import type { Logger } from "../internal/logger.ts";
import { startActivity } from "./activity.ts";
import { type Anvil, isPortFree, startAnvil } from "./anvil.ts";
import { demoConfigFile, writeDemoConfig } from "./demoConfig.ts";
import { type DemoDeployment, deployDemo } from "./deploy.ts";

export type StartedProtoscan = { url: string; stop(): Promise<void> };

export type RunDemoOptions = {
  /** Where the CLI makes protoscan listen (`HOST`/`PORT`); shown in the banner until protoscan reports its URL. */
  host: string;
  port: number;
  /** `DATA_DIR`: the generated config goes here (a temp folder when it is `memory://`). */
  dataDir: string;
  logger: Logger;
  /** Starts protoscan (indexer + API + WebSocket) on the given config file; injected by the CLI. */
  startProtoscan: (configPath: string) => Promise<StartedProtoscan>;
  /** anvil's port (default 8545 when free, so wallets find it; else any free port). */
  anvilPort?: number;
  /** Pause between generated transactions (default 1500 ms). */
  activityIntervalMs?: number;
  /** Where the banner goes (default stdout). */
  print?: (text: string) => void;
};

export type RunningDemo = {
  rpcUrl: string;
  configPath: string;
  deployment: DemoDeployment;
  /** Stop the activity generator, protoscan, then anvil. Idempotent. */
  stop(): Promise<void>;
};

/**
 * `npm run demo` (SPEC §1): start anvil (automine), deploy the demo protocols, write
 * `<dataDir>/protoscan.demo.yaml`, start protoscan on it, keep generating activity, and print the URLs.
 * If a step fails, what was already started is stopped before the error is rethrown.
 */
export async function runDemo(options: RunDemoOptions): Promise<RunningDemo> {
  const { logger } = options;
  const stack: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      for (const fn of stack.reverse()) {
        try {
          await fn();
        } catch (error) {
          logger.warn({ err: error }, "demo: error while stopping");
        }
      }
    })();
    return stopping;
  };

  try {
    const anvilPort = options.anvilPort ?? ((await isPortFree(8545)) ? 8545 : undefined);
    const anvil: Anvil = await startAnvil(anvilPort === undefined ? {} : { port: anvilPort });
    stack.push(anvil.stop);
    logger.info({ rpcUrl: anvil.url, pid: anvil.pid }, "demo: anvil started");

    const deployment = await deployDemo({ rpcUrl: anvil.url });
    logger.info({ contracts: deployment.contracts }, "demo: contracts deployed");

    const dir = options.dataDir.startsWith("memory://")
      ? join(tmpdir(), `protoscan-demo-${process.pid}`)
      : options.dataDir;
    const configPath = join(dir, "protoscan.demo.yaml");
    await writeDemoConfig(configPath, demoConfigFile(deployment, { rpcUrl: anvil.url }));
    await writeFile(join(dir, "demo-deployment.json"), `${JSON.stringify(deployment, null, 2)}\n`);

    const protoscan = await options.startProtoscan(configPath);
    stack.push(protoscan.stop);

    const activity = startActivity({
      rpcUrl: anvil.url,
      deployment,
      logger,
      ...(options.activityIntervalMs !== undefined ? { intervalMs: options.activityIntervalMs } : {}),
    });
    stack.push(activity.stop);

    const apiUrl = protoscan.url || `http://${options.host}:${options.port}`;
    const print = options.print ?? ((text: string) => process.stdout.write(text));
    print(banner({ apiUrl, rpcUrl: anvil.url, configPath, deployment }));
    return { rpcUrl: anvil.url, configPath, deployment, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function banner(args: {
  apiUrl: string;
  rpcUrl: string;
  configPath: string;
  deployment: DemoDeployment;
}): string {
  const api = args.apiUrl.replace(/\/+$/, "");
  const ws = `${api.replace(/^http/, "ws")}/ws`;
  const c = args.deployment.contracts;
  const shownPath = relative(process.cwd(), args.configPath);
  const rows: [string, string][] = [
    ["Explorer", `${api}/  (open it in a browser)`],
    ["API", `${api}/api/overview`],
    ["Docs", `${api}/docs`],
    ["WebSocket", `${ws}  (send {"op":"subscribe","topic":"transactions"})`],
    ["Anvil RPC", `${args.rpcUrl}  (chain ${args.deployment.chainId})`],
    ["Config", shownPath.startsWith("..") ? args.configPath : `./${shownPath}`],
    ["Router", getAddress(c.router)],
    ["Vault", getAddress(c.vault)],
    ["DEMO", getAddress(c.demo)],
    ["USDC", getAddress(c.usdc)],
  ];
  const lines = rows.map(([label, value]) => `  ${label.padEnd(10)} ${value}`);
  const title = "  protoscan demo is running: a local chain with DemoSwap and DemoVault, and live activity";
  const rule = `  ${"─".repeat(title.length - 2)}`;
  return [
    "",
    title,
    rule,
    ...lines,
    rule,
    `  Try:  curl ${api}/api/transactions/recent?limit=5`,
    "  Ctrl-C stops everything.",
    "",
    "",
  ].join("\n");
}
