import { isRecord } from "../internal/isRecord.ts";
/**
 * A contradiction in a provider's answer: what is wrong, and the block it concerns when one is known.
 * Strings quote only hashes, numbers and method names (never a URL).
 */
export type Inconsistency = { problem: string; block?: bigint | undefined };

type Json = Record<string, unknown>;

/** A JSON-RPC quantity (`0x1a`) as a bigint; undefined for anything else (tags, null, garbage). */
function quantity(value: unknown): bigint | undefined {
  if (typeof value !== "string" || !/^0x[0-9a-fA-F]{1,64}$/.test(value)) return undefined;
  return BigInt(value);
}

/** A 32-byte hash, lowercase; undefined for anything else. */
function hash32(value: unknown): string | undefined {
  return typeof value === "string" && /^0x[0-9a-fA-F]{64}$/.test(value) ? value.toLowerCase() : undefined;
}

const lower = (value: unknown) => (typeof value === "string" ? value.toLowerCase() : undefined);

/** A provider's value quoted in a message, cut short: a lying provider does not get to flood the logs. */
const shown = (value: unknown) => String(value).slice(0, 66);

/**
 * Check one JSON-RPC result against its own request and against itself, before anything reads it. A provider
 * (or a load balancer mixing nodes) can answer with data that contradicts itself: the same log index twice, a
 * receipt for another transaction, a block of another number, a log of a block outside the requested range.
 * Storing that would corrupt the index silently; refusing it makes the chain client retry (see
 * `createChainClient`), and an answer that keeps contradicting itself fails the call.
 *
 * Only what the answer itself proves wrong is refused: fields a provider omits are not required, and checks
 * across calls (a log's block hash against the block fetched separately) are the fetch functions' job,
 * since a reorg between two calls produces them legitimately.
 *
 * Returns undefined when the result is consistent (or of a method not checked here).
 * @see https://ethereum.org/en/developers/docs/apis/json-rpc/
 */
export function validateRpcResult(
  method: string,
  params: readonly unknown[],
  result: unknown,
): Inconsistency | undefined {
  switch (method) {
    case "eth_getLogs":
      return checkGetLogs(params[0], result);
    case "eth_getBlockByNumber":
    case "eth_getBlockByHash":
      return checkBlock(method, params, result);
    case "eth_getBlockReceipts":
      return checkBlockReceipts(params[0], result);
    case "eth_getTransactionReceipt":
      return checkTransactionReceipt(params[0], result);
    case "eth_getTransactionByHash":
      return checkTransaction(params[0], result);
    default:
      return undefined;
  }
}

/** Does `topic` pass one position of an eth_getLogs topic filter (null, a topic, or a list of topics)? */
function topicMatches(filter: unknown, topic: unknown): boolean {
  if (filter === null || filter === undefined) return true;
  const wanted = Array.isArray(filter) ? filter.map(lower) : [lower(filter)];
  return wanted.includes(lower(topic));
}

/** eth_getLogs: every log inside the filter (range, block hash, addresses, topics), no log twice. */
function checkGetLogs(filter: unknown, result: unknown): Inconsistency | undefined {
  if (!Array.isArray(result)) return { problem: "eth_getLogs result is not an array" };
  const spec = isRecord(filter) ? filter : {};
  const from = quantity(spec.fromBlock);
  const to = quantity(spec.toBlock);
  const blockHash = hash32(spec.blockHash);
  const addresses =
    spec.address === undefined || spec.address === null
      ? undefined
      : new Set((Array.isArray(spec.address) ? spec.address : [spec.address]).map(lower));
  const topics = Array.isArray(spec.topics) ? spec.topics : [];
  const hashOfBlock = new Map<bigint, string>();
  const seen = new Set<string>();
  for (const log of result) {
    if (!isRecord(log)) return { problem: "eth_getLogs returned a log that is not an object" };
    const number = quantity(log.blockNumber);
    if (number === undefined) continue; // a pending log: nothing to check it against
    if ((from !== undefined && number < from) || (to !== undefined && number > to)) {
      return { problem: `eth_getLogs returned a log of block ${number} outside the range`, block: number };
    }
    const logHash = lower(log.blockHash);
    if (blockHash !== undefined && logHash !== blockHash) {
      return {
        problem: `eth_getLogs returned a log of block ${shown(logHash)} for block ${blockHash}`,
        block: number,
      };
    }
    if (logHash !== undefined) {
      const known = hashOfBlock.get(number);
      if (known === undefined) hashOfBlock.set(number, logHash);
      else if (known !== logHash) {
        return { problem: `eth_getLogs returned logs naming two hashes for block ${number}`, block: number };
      }
    }
    if (addresses && !addresses.has(lower(log.address))) {
      return {
        problem: `eth_getLogs returned a log of ${shown(log.address)}, not a filtered address`,
        block: number,
      };
    }
    const logTopics = Array.isArray(log.topics) ? log.topics : [];
    if (!topics.every((wanted, i) => topicMatches(wanted, logTopics[i]))) {
      return { problem: "eth_getLogs returned a log that does not match the topic filter", block: number };
    }
    const index = quantity(log.logIndex);
    if (index === undefined) continue;
    const key = `${number}:${index}`;
    if (seen.has(key)) {
      return { problem: `eth_getLogs returned log index ${index} of block ${number} twice`, block: number };
    }
    seen.add(key);
  }
  return undefined;
}

/** A block: the number or hash asked for; its transactions (when full) belong to it and appear once. */
function checkBlock(method: string, params: readonly unknown[], result: unknown): Inconsistency | undefined {
  if (result === null) return undefined; // not found: viem reports it
  if (!isRecord(result)) return { problem: `${method} result is not a block object` };
  const number = quantity(result.number);
  const askedNumber = method === "eth_getBlockByNumber" ? quantity(params[0]) : undefined;
  if (askedNumber !== undefined && number !== askedNumber) {
    return { problem: `${method} asked for block ${askedNumber}, got block ${number}`, block: askedNumber };
  }
  const askedHash = method === "eth_getBlockByHash" ? hash32(params[0]) : undefined;
  if (askedHash !== undefined && lower(result.hash) !== askedHash) {
    return { problem: `${method} asked for block ${askedHash}, got ${shown(result.hash)}`, block: number };
  }
  if (!Array.isArray(result.transactions)) return undefined;
  const hashes = new Set<string>();
  for (const tx of result.transactions) {
    const txHash = isRecord(tx) ? lower(tx.hash) : lower(tx);
    if (txHash === undefined)
      return { problem: `${method} returned a transaction without a hash`, block: number };
    if (hashes.has(txHash)) {
      return {
        problem: `${method} lists transaction ${shown(txHash)} twice in block ${number}`,
        block: number,
      };
    }
    hashes.add(txHash);
    if (!isRecord(tx)) continue;
    const txBlock = quantity(tx.blockNumber);
    const txBlockHash = lower(tx.blockHash);
    if (
      (txBlock !== undefined && txBlock !== number) ||
      (txBlockHash !== undefined && txBlockHash !== lower(result.hash))
    ) {
      return { problem: `${method} returned transaction ${shown(txHash)} of another block`, block: number };
    }
  }
  return undefined;
}

/**
 * One receipt: its logs belong to it (transaction, block), no log index repeats within `seenLogs` (shared
 * across a block's receipts).
 */
function checkReceipt(method: string, receipt: Json, seenLogs: Set<string>): Inconsistency | undefined {
  const block = quantity(receipt.blockNumber);
  const blockHash = lower(receipt.blockHash);
  const txHash = lower(receipt.transactionHash);
  if (!Array.isArray(receipt.logs)) return undefined;
  for (const log of receipt.logs) {
    if (!isRecord(log)) return { problem: `${method} returned a log that is not an object`, block };
    const logBlock = quantity(log.blockNumber);
    const logBlockHash = lower(log.blockHash);
    const logTx = lower(log.transactionHash);
    if (
      (logBlock !== undefined && block !== undefined && logBlock !== block) ||
      (logBlockHash !== undefined && blockHash !== undefined && logBlockHash !== blockHash)
    ) {
      return { problem: `${method}: a log of ${shown(txHash)} names another block`, block };
    }
    if (logTx !== undefined && txHash !== undefined && logTx !== txHash) {
      return { problem: `${method}: the receipt of ${shown(txHash)} holds a log of ${shown(logTx)}`, block };
    }
    const index = quantity(log.logIndex);
    if (index === undefined) continue;
    if (seenLogs.has(String(index))) {
      return { problem: `${method} returned log index ${index} of block ${block} twice`, block };
    }
    seenLogs.add(String(index));
  }
  return undefined;
}

/** eth_getBlockReceipts: every receipt of the block asked for, once, with log indexes unique in the block. */
function checkBlockReceipts(asked: unknown, result: unknown): Inconsistency | undefined {
  const method = "eth_getBlockReceipts";
  if (result === null) return undefined;
  if (!Array.isArray(result)) return { problem: `${method} result is not an array` };
  // The block is named by number, by hash, or by `{ blockHash }` (EIP-1898).
  const byObject = isRecord(asked) ? hash32(asked.blockHash) : undefined;
  const askedHash = hash32(asked) ?? byObject;
  const askedNumber = askedHash === undefined ? quantity(asked) : undefined;
  const seenTx = new Set<string>();
  const seenIndex = new Set<string>();
  const seenLogs = new Set<string>();
  let first: { number: bigint | undefined; hash: string | undefined } | undefined;
  for (const receipt of result) {
    if (!isRecord(receipt)) return { problem: `${method} returned a receipt that is not an object` };
    const number = quantity(receipt.blockNumber);
    const hash = lower(receipt.blockHash);
    const block = askedNumber ?? number;
    if (askedNumber !== undefined && number !== askedNumber) {
      return { problem: `${method} asked for block ${askedNumber}, got a receipt of block ${number}`, block };
    }
    if (askedHash !== undefined && hash !== askedHash) {
      return { problem: `${method} asked for block ${askedHash}, got a receipt of ${shown(hash)}`, block };
    }
    first ??= { number, hash };
    if (first.number !== number || first.hash !== hash) {
      return { problem: `${method} returned receipts of two blocks`, block };
    }
    const txHash = lower(receipt.transactionHash);
    if (txHash !== undefined) {
      if (seenTx.has(txHash))
        return { problem: `${method} returned the receipt of ${shown(txHash)} twice`, block };
      seenTx.add(txHash);
    }
    const index = quantity(receipt.transactionIndex);
    if (index !== undefined) {
      if (seenIndex.has(String(index))) {
        return { problem: `${method} returned two receipts at transaction index ${index}`, block };
      }
      seenIndex.add(String(index));
    }
    const bad = checkReceipt(method, receipt, seenLogs);
    if (bad) return bad;
  }
  return undefined;
}

/** eth_getTransactionReceipt: the receipt of the transaction asked for, its logs its own. */
function checkTransactionReceipt(asked: unknown, result: unknown): Inconsistency | undefined {
  const method = "eth_getTransactionReceipt";
  if (result === null) return undefined; // not mined (yet)
  if (!isRecord(result)) return { problem: `${method} result is not a receipt object` };
  const block = quantity(result.blockNumber);
  const askedHash = hash32(asked);
  if (askedHash !== undefined && lower(result.transactionHash) !== askedHash) {
    return {
      problem: `${method} asked for ${askedHash}, got the receipt of ${shown(result.transactionHash)}`,
      block,
    };
  }
  return checkReceipt(method, result, new Set());
}

/** eth_getTransactionByHash: the transaction asked for. */
function checkTransaction(asked: unknown, result: unknown): Inconsistency | undefined {
  const method = "eth_getTransactionByHash";
  if (result === null) return undefined;
  if (!isRecord(result)) return { problem: `${method} result is not a transaction object` };
  const askedHash = hash32(asked);
  if (askedHash !== undefined && lower(result.hash) !== askedHash) {
    return {
      problem: `${method} asked for ${askedHash}, got ${shown(result.hash)}`,
      block: quantity(result.blockNumber),
    };
  }
  return undefined;
}
