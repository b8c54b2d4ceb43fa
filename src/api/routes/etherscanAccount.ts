import { type Hex, hexToBigInt } from "viem";
import { FatalRpcError } from "../../chain/errors.ts";
import {
  type EtherscanTransactionRow,
  type EtherscanTransferRow,
  getEtherscanTokenBalance,
  getEtherscanTransactions,
  getEtherscanTransfers,
} from "../../store/etherscanReads.ts";
import { type EtherscanContext, type EtherscanModules, etherscanFunctionName } from "../etherscanContext.ts";
import { EtherscanError, list, ok } from "../etherscanEnvelope.ts";
import {
  addressParam,
  type EtherscanParams,
  optionalAddressParam,
  pagingParams,
  RESULT_WINDOW,
  tagParam,
} from "../etherscanParams.ts";
import { nodeErrorMessage } from "./etherscanProxy.ts";

/** At most this many addresses per `balancemulti`, as Etherscan. */
export const BALANCEMULTI_MAX = 20;

const unixSeconds = (date: Date) => String(Math.floor(date.getTime() / 1000));
/** Columns stored since migration 0016 are null in older rows: Etherscan-shaped, but empty (docs/etherscan.md). */
const orEmpty = (value: string | number | null) => (value === null ? "" : String(value));

/** `account`: txlist, tokentx and tokenbalance over the store; balance and balancemulti from the node. */
export function accountActions(ctx: EtherscanContext): EtherscanModules["account"] {
  const pageOf = (params: EtherscanParams) => {
    const p = pagingParams(params, { maxOffset: RESULT_WINDOW });
    return {
      limit: p.offset,
      skip: (p.page - 1) * p.offset,
      sort: p.sort,
      fromBlock: p.startBlock,
      toBlock: p.endBlock,
    };
  };
  const tokenOf = (address: string) => {
    const token = ctx.tokens.get(address);
    if (!token) throw new EtherscanError("Error! Token is not tracked by this protoscan");
    return token;
  };
  /**
   * The balance at `tag` from the node. A request the node refuses for good (a block past its head: anvil's
   * `-32602 BlockOutOfRangeError`) comes from the input: its message is the answer, as Etherscan answers a
   * bad parameter, not the error of a failure. (geth's "header not found" may only mean a node behind its
   * peers: the chain client retries it, and it ends as "The node did not answer".)
   */
  const nodeBalance = async (address: string, tag: string) => {
    try {
      return hexToBigInt(await ctx.deps.chain.request<Hex>("eth_getBalance", [address, tag])).toString();
    } catch (error) {
      // A JSON-RPC error about the request, not the provider refusing protoscan (401/403/404: the operator's
      // set-up, which stays a logged failure).
      if (error instanceof FatalRpcError && error.code !== undefined && (error.status ?? 200) <= 400) {
        throw new EtherscanError(`Error! ${nodeErrorMessage("eth_getBalance", error)}`);
      }
      throw error;
    }
  };

  const transactionFields = (row: EtherscanTransactionRow) => ({
    blockNumber: String(row.blockNumber),
    timeStamp: unixSeconds(row.blockTimestamp),
    hash: row.hash,
    nonce: orEmpty(row.nonce),
    blockHash: row.blockHash,
  });

  return {
    async txlist(params) {
      const address = addressParam(params);
      const [rows, head] = await Promise.all([
        getEtherscanTransactions(ctx.db, address, pageOf(params)),
        ctx.indexedHead(),
      ]);
      return list(
        rows.map((row) => {
          const methodId = row.methodId ?? "";
          return {
            ...transactionFields(row),
            transactionIndex: String(row.transactionIndex),
            from: row.fromAddress,
            to: row.toAddress ?? "",
            value: row.valueWei,
            gas: orEmpty(row.gasLimit),
            gasPrice: row.gasPrice,
            isError: row.status ? "0" : "1",
            txreceipt_status: row.status ? "1" : "0",
            input: orEmpty(row.input),
            contractAddress: row.contractAddress ?? "",
            cumulativeGasUsed: orEmpty(row.cumulativeGasUsed),
            gasUsed: row.gasUsed,
            confirmations: String(Math.max(0, head - row.blockNumber + 1)),
            methodId,
            functionName: etherscanFunctionName(ctx.registry, row.toAddress, methodId),
          };
        }),
        "No transactions found",
      );
    },

    async tokentx(params) {
      const address = optionalAddressParam(params, "address");
      const token = optionalAddressParam(params, "contractaddress");
      if (address === undefined && token === undefined)
        throw new EtherscanError("Error! Invalid address format");
      const [rows, head] = await Promise.all([
        getEtherscanTransfers(ctx.db, { address, token, tokens: [...ctx.tokens.keys()] }, pageOf(params)),
        ctx.indexedHead(),
      ]);
      return list(
        rows.map((row: EtherscanTransferRow) => {
          const config = ctx.tokens.get(row.tokenAddress);
          return {
            ...transactionFields(row),
            from: row.transferFrom,
            contractAddress: row.tokenAddress,
            to: row.transferTo,
            value: row.amount,
            tokenName: config?.name ?? "",
            tokenSymbol: config?.symbol ?? "",
            tokenDecimal: config === undefined ? "" : String(config.decimals),
            transactionIndex: String(row.transactionIndex),
            gas: orEmpty(row.gasLimit),
            gasPrice: row.gasPrice,
            gasUsed: row.gasUsed,
            cumulativeGasUsed: orEmpty(row.cumulativeGasUsed),
            input: orEmpty(row.input),
            confirmations: String(Math.max(0, head - row.blockNumber + 1)),
            logIndex: String(row.logIndex),
          };
        }),
        "No transactions found",
      );
    },

    async tokenbalance(params) {
      const token = tokenOf(addressParam(params, "contractaddress"));
      const holder = addressParam(params);
      return ok((await getEtherscanTokenBalance(ctx.db, token.address.toLowerCase(), holder)) ?? "0");
    },

    async balance(params) {
      const address = addressParam(params);
      return ok(await nodeBalance(address, tagParam(params)));
    },

    async balancemulti(params) {
      const raw = (params.address ?? "").split(",").filter((a) => a !== "");
      if (raw.length > BALANCEMULTI_MAX) {
        throw new EtherscanError(`Error! Maximum of ${BALANCEMULTI_MAX} addresses per request`);
      }
      const addresses = raw.map((address) => addressParam({ address }));
      if (addresses.length === 0) throw new EtherscanError("Error! Invalid address format");
      const tag = tagParam(params);
      const balances = await Promise.all(addresses.map((a) => nodeBalance(a, tag)));
      return ok(addresses.map((account, i) => ({ account, balance: balances[i] })));
    },
  };
}
