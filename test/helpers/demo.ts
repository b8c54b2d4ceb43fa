import { resolveConfig } from "../../src/config/resolveConfig.ts";
import type { Config, ConfigFile } from "../../src/config/schema.ts";
import type { StartAnvilOptions } from "../../src/demo/anvil.ts";
import { demoConfigFile } from "../../src/demo/demoConfig.ts";
import { type DemoDeployment, deployDemo } from "../../src/demo/deploy.ts";
import { type Anvil, startTestAnvil } from "./anvil.ts";

export type DemoChain = {
  anvil: Anvil;
  deployment: DemoDeployment;
  /** The demo config as a file object (inline ABIs), e.g. to write it with `writeDemoConfig`. */
  configFile: ConfigFile;
  /** The same config resolved as every subsystem receives it. */
  config: Config;
};

/**
 * A fresh anvil with the demo protocols deployed (about half a second once the contracts are compiled and
 * cached) and the matching config. Stop it with `await chain.anvil.stop()` in `afterAll`.
 */
export async function setupDemoChain(
  opts: { anvil?: StartAnvilOptions; pollIntervalSeconds?: number } = {},
): Promise<DemoChain> {
  const anvil = await startTestAnvil(opts.anvil);
  try {
    const deployment = await deployDemo({ rpcUrl: anvil.url });
    const configFile = demoConfigFile(deployment, {
      rpcUrl: anvil.url,
      ...(opts.pollIntervalSeconds !== undefined ? { pollIntervalSeconds: opts.pollIntervalSeconds } : {}),
    });
    return { anvil, deployment, configFile, config: resolveConfig(configFile, null) };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}
