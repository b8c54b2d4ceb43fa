import { type Hex, hexToNumber, numberToHex } from "viem";
import { getEtherscanLogs, type LogsFilter } from "../../store/etherscanReads.ts";
import { createTtlCache } from "../cache/createTtlCache.ts";
import type { EtherscanContext, EtherscanModules } from "../etherscanContext.ts";
import { EtherscanError, list, ok } from "../etherscanEnvelope.ts";
import { integerParam, optionalAddressParam, pagingParams, topicParam } from "../etherscanParams.ts";

/** At most this many logs per `getLogs` page, as Etherscan. */
export const GET_LOGS_MAX = 1000;

const hex = (n: number | bigint | string) => numberToHex(BigInt(n));

/** `logs` `getLogs` over the stored logs. */
export function logsActions(ctx: EtherscanContext): EtherscanModules["logs"] {
  return {
    async getLogs(params) {
      const paging = pagingParams(params, { maxOffset: GET_LOGS_MAX, from: "fromBlock", to: "toBlock" });
      const topics: { position: number; value: string }[] = [];
      for (let position = 0; position < 4; position++) {
        const value = topicParam(params, `topic${position}`);
        if (value !== undefined) topics.push({ position, value });
      }
      // Between each given topic and the next: `topic{a}_{b}_opr`, `and` when absent (docs/etherscan.md).
      const operators: ("and" | "or")[] = [];
      for (let i = 1; i < topics.length; i++) {
        const name = `topic${topics[i - 1]!.position}_${topics[i]!.position}_opr`;
        const value = params[name] ?? "and";
        if (value !== "and" && value !== "or") throw new EtherscanError(`Error! Invalid ${name}`);
        operators.push(value);
      }
      const filter: LogsFilter = { address: optionalAddressParam(params, "address"), topics, operators };
      const rows = await getEtherscanLogs(ctx.db, filter, {
        limit: paging.offset,
        skip: (paging.page - 1) * paging.offset,
        fromBlock: paging.startBlock,
        toBlock: paging.endBlock,
      });
      return list(
        rows.map((row) => ({
          address: row.address,
          topics: row.topics,
          data: row.data,
          blockNumber: hex(row.blockNumber),
          blockHash: row.blockHash,
          timeStamp: hex(Math.floor(row.blockTimestamp.getTime() / 1000)),
          gasPrice: hex(row.gasPrice),
          gasUsed: hex(row.gasUsed),
          logIndex: hex(row.logIndex),
          transactionHash: row.txHash,
          transactionIndex: hex(row.transactionIndex),
        })),
        "No records found",
      );
    },
  };
}

/**
 * `block` `getblocknobytime`: the last block at or before `timestamp` (`closest=before`, the default) or the
 * first at or after it (`after`), by a binary search over the node's block timestamps (cached a minute).
 */
export function blockActions(ctx: EtherscanContext): EtherscanModules["block"] {
  const times = createTtlCache<number, number>({ ttlMs: 60_000, maxEntries: 10_000 });
  const timeOf = (n: number) =>
    times.get(n, async () => {
      const block = await ctx.deps.chain.request<{ timestamp: Hex } | null>("eth_getBlockByNumber", [
        hex(n),
        false,
      ]);
      if (!block) throw new EtherscanError("Error! No closest block found");
      return hexToNumber(block.timestamp);
    });
  return {
    async getblocknobytime(params) {
      if (params.timestamp === undefined || params.timestamp === "")
        throw new EtherscanError("Error! Invalid timestamp");
      const timestamp = integerParam(params, "timestamp", 0);
      const closest = params.closest ?? "before";
      if (closest !== "before" && closest !== "after")
        throw new EtherscanError("Error! Invalid closest value");
      const latest = hexToNumber(await ctx.deps.chain.request<Hex>("eth_blockNumber", []));
      if (closest === "before") {
        if ((await timeOf(0)) > timestamp) throw new EtherscanError("Error! No closest block found");
        // The highest block whose time is at most `timestamp`.
        let [low, high] = [0, latest];
        while (low < high) {
          const mid = Math.ceil((low + high) / 2);
          if ((await timeOf(mid)) <= timestamp) low = mid;
          else high = mid - 1;
        }
        return ok(String(low));
      }
      if ((await timeOf(latest)) < timestamp) throw new EtherscanError("Error! No closest block found");
      // The lowest block whose time is at least `timestamp`.
      let [low, high] = [0, latest];
      while (low < high) {
        const mid = Math.floor((low + high) / 2);
        if ((await timeOf(mid)) >= timestamp) high = mid;
        else low = mid + 1;
      }
      return ok(String(low));
    },
  };
}
