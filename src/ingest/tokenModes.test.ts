import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/helpers/db.ts";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import { type ChainClient, createChainClient } from "../chain/createChainClient.ts";
import type { Config } from "../config/schema.ts";
import { type Anvil, findFreePort, startAnvil } from "../demo/anvil.ts";
import { createJsonRpc } from "../demo/demoClient.ts";
import { NonRetryableError, RetryableError } from "../internal/errors.ts";
import { getTokenModes } from "../store/indexerState.ts";
import { resolveTokenModes } from "./tokenModes.ts";

const WITH_CODE = "0x00000000000000000000000000000000000000c0";
const WITHOUT_CODE = "0x00000000000000000000000000000000000000c1";
const SHARED = "0x00000000000000000000000000000000000000c2";

function config(url: string, startBlock: number, tokens: { address: string; exclusive: boolean }[]): Config {
  const base = testConfig({ urls: [url] });
  return {
    ...base,
    indexer: { ...base.indexer, startBlock },
    tokens: tokens.map((t) => ({ ...t, symbol: "T", name: "T", decimals: 18, official: false })),
  } as unknown as Config;
}

const opened: ChainClient[] = [];
function chainFor(c: Config): ChainClient {
  const chain = createChainClient(testCommon(c), { baseDelayMs: 5, maxDelayMs: 20, maxRetries: 1 });
  opened.push(chain);
  return chain;
}

describe("resolveTokenModes", () => {
  let tdb: TestDatabase;
  let archive: Anvil;
  let pruned: Anvil;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    [archive, pruned] = await Promise.all([
      startAnvil(),
      // Keeps the state of its last 2 blocks only, as a full (non-archive) node keeps its last 128.
      startAnvil({ extraArgs: ["--prune-history", "2"] }),
    ]);
    await createJsonRpc(archive.url)("anvil_setCode", [WITH_CODE, "0x6000"]);
    await createJsonRpc(archive.url)("anvil_mine", ["0x5"]);
    await createJsonRpc(pruned.url)("anvil_mine", ["0xa"]);
  });
  afterAll(async () => {
    for (const chain of opened) chain.close();
    await Promise.all([archive?.stop(), pruned?.stop()]);
    await tdb?.cleanup();
  });

  test("default: delta for an exclusive token without code before startBlock, else call; remembered", async () => {
    const c = config(archive.url, 3, [
      { address: WITH_CODE, exclusive: true },
      { address: WITHOUT_CODE, exclusive: true },
      { address: SHARED, exclusive: false },
    ]);
    const delta = await resolveTokenModes(c, chainFor(c), tdb.database.db);
    expect([...delta]).toEqual([WITHOUT_CODE]);
    expect((await getTokenModes(tdb.database.db)).sort((a, b) => a.token.localeCompare(b.token))).toEqual([
      { token: WITH_CODE, mode: "call", fromBlock: 3 },
      { token: WITHOUT_CODE, mode: "delta", fromBlock: 3 },
      { token: SHARED, mode: "call", fromBlock: 3 },
    ]);
    // Decided once: a node that is gone now is not asked again.
    const gone = config(`http://127.0.0.1:${await findFreePort()}`, 3, c.tokens);
    expect([...(await resolveTokenModes(gone, chainFor(gone), tdb.database.db))]).toEqual([WITHOUT_CODE]);
  });

  test("error: a node without the state of startBlock - 1 stops with what protoscan needs", async () => {
    const token = "0x00000000000000000000000000000000000000d0";
    const c = config(pruned.url, 2, [{ address: token, exclusive: true }]);
    const error = await resolveTokenModes(c, chainFor(c), tdb.database.db).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NonRetryableError);
    const message = (error as Error).message;
    expect(message).toContain(
      `could not read the code of token ${token} at block 1 (indexer.startBlock - 1)`,
    );
    expect(message).toContain("block height is 10 but requested was 1");
    expect(message).toContain("needs a node that keeps the state of old blocks (an archive node");
    expect((await getTokenModes(tdb.database.db)).map((m) => m.token)).not.toContain(token);
  });

  test("error: a node that does not answer stays retryable (start-up waits for it)", async () => {
    const token = "0x00000000000000000000000000000000000000d1";
    const c = config(`http://127.0.0.1:${await findFreePort()}`, 2, [{ address: token, exclusive: true }]);
    const error = await resolveTokenModes(c, chainFor(c), tdb.database.db).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(NonRetryableError);
    expect(error instanceof RetryableError || (error as Error).cause instanceof RetryableError).toBe(true);
  });
});
