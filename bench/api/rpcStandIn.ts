/**
 * A stand-in Ethereum node for `npm run bench:api`: the few JSON-RPC methods the API reads live from the node
 * (SPEC §4: the address view's `eth_getBalance` / `eth_getCode`, `totalSupply()` behind the token detail and
 * holders' `share`, the head behind the indexer section, and the stored head's hash that `protoscan start`
 * checks before serving (`eth_getBlockByNumber`)), answered from the seeded data, single or batched
 * as in the JSON-RPC 2.0 spec. It runs in a process of its own, started by the benchmark (`--import tsx`),
 * and reports its port over IPC.
 */
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { benchBlockHash } from "./chainRecords.ts";

export type StandInSetup = {
  chainId: number;
  head: number;
  /** lowercase token address -> total supply (decimal) */
  supplies: Record<string, string>;
  /** lowercase addresses that have code */
  contracts: string[];
};

type RpcCall = { id?: unknown; method?: unknown; params?: unknown };

const TOTAL_SUPPLY = "0x18160ddd";
const hex = (value: bigint) => `0x${value.toString(16)}`;

function answer(setup: StandInSetup, call: RpcCall): object {
  const params = Array.isArray(call.params) ? (call.params as unknown[]) : [];
  const ok = (result: unknown) => ({ jsonrpc: "2.0", id: call.id ?? null, result });
  const address = typeof params[0] === "string" ? params[0].toLowerCase() : "";
  switch (call.method) {
    case "eth_chainId":
      return ok(hex(BigInt(setup.chainId)));
    case "eth_blockNumber":
      return ok(hex(BigInt(setup.head)));
    case "eth_getBalance": {
      // A stable balance per address: some ether and wei, different for every address.
      const digest = createHash("sha256").update(address).digest();
      return ok(hex(digest.readBigUInt64BE(0) * 1000n));
    }
    case "eth_getBlockByNumber": {
      // The seeded blocks' headers, without transactions: what the start-up check compares is the hash.
      const n = typeof params[0] === "string" && params[0].startsWith("0x") ? Number(params[0]) : setup.head;
      if (!(n <= setup.head)) return ok(null);
      return ok({
        number: hex(BigInt(n)),
        hash: benchBlockHash(n),
        parentHash: benchBlockHash(n - 1),
        timestamp: "0x0",
        transactions: [],
      });
    }
    case "eth_getCode":
      return ok(setup.contracts.includes(address) ? "0x6080604052348015600f57600080fd5b50" : "0x");
    case "eth_call": {
      const tx = (params[0] ?? {}) as { to?: string; data?: string; input?: string };
      const data = (tx.data ?? tx.input ?? "").toLowerCase();
      const supply = setup.supplies[(tx.to ?? "").toLowerCase()];
      if (data.startsWith(TOTAL_SUPPLY) && supply !== undefined) {
        return ok(`0x${BigInt(supply).toString(16).padStart(64, "0")}`);
      }
      return { jsonrpc: "2.0", id: call.id ?? null, error: { code: 3, message: "execution reverted" } };
    }
    default:
      return {
        jsonrpc: "2.0",
        id: call.id ?? null,
        error: { code: -32601, message: `the method ${String(call.method)} does not exist/is not available` },
      };
  }
}

process.once("message", (setup: StandInSetup) => {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const reply = Array.isArray(body)
        ? body.map((call: RpcCall) => answer(setup, call))
        : answer(setup, body as RpcCall);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
    });
  });
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    process.send?.({ port: typeof address === "object" && address ? address.port : 0 });
  });
});
