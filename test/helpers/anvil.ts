import { type Anvil, type StartAnvilOptions, startAnvil } from "../../src/demo/anvil.ts";

export type { Anvil };

/**
 * A private anvil node for one test file: a free port, automine unless `opts` says otherwise, killed when the
 * test process exits even if `stop()` is forgotten. Call `await anvil.stop()` in `afterAll`.
 *
 * anvil hangs on many transactions sent concurrently in automine mode: send them one at a time, or pass
 * `{ noMining: true }` and mine with `anvil_mine`.
 */
export async function startTestAnvil(opts: StartAnvilOptions = {}): Promise<Anvil> {
  return await startAnvil(opts);
}
