import type { Address, TokenConfig } from "../../config/schema.ts";
import { getEtherscanHolders } from "../../store/etherscanReads.ts";
import type { EtherscanContext, EtherscanModules } from "../etherscanContext.ts";
import { ETHERSCAN_ERRORS, EtherscanError, list, notOk, ok } from "../etherscanEnvelope.ts";
import { addressParam, type EtherscanParams, pagingParams, RESULT_WINDOW } from "../etherscanParams.ts";

/** A tracked token named by `contractaddress`; NOTOK for any other contract (protoscan indexes only those). */
function trackedToken(ctx: EtherscanContext, params: EtherscanParams): TokenConfig {
  const token = ctx.tokens.get(addressParam(params, "contractaddress"));
  if (!token) throw new EtherscanError("Error! Token is not tracked by this protoscan");
  return token;
}

/** `stats` `tokensupply`: the token's `totalSupply()` from the node (a 15 s cache). */
export function statsActions(ctx: EtherscanContext): EtherscanModules["stats"] {
  return {
    async tokensupply(params) {
      const token = trackedToken(ctx, params);
      return ok((await ctx.totalSupply.get(token.address.toLowerCase() as Address)).toString());
    },
  };
}

/** `token`: `tokenholderlist` over the stored balances, `tokeninfo` from the configuration and the node. */
export function tokenActions(ctx: EtherscanContext): EtherscanModules["token"] {
  return {
    async tokenholderlist(params) {
      const token = trackedToken(ctx, params);
      const paging = pagingParams(params, { maxOffset: RESULT_WINDOW });
      const holders = await getEtherscanHolders(ctx.db, token.address.toLowerCase(), {
        limit: paging.offset,
        skip: (paging.page - 1) * paging.offset,
      });
      return list(
        holders.map((h) => ({ TokenHolderAddress: h.holder, TokenHolderQuantity: h.balance })),
        "No records found",
      );
    },

    async tokeninfo(params) {
      const token = trackedToken(ctx, params);
      const address = token.address.toLowerCase() as Address;
      const [supply, price] = await Promise.all([
        ctx.totalSupply.get(address),
        ctx.deps.prices.priceOf(address),
      ]);
      return ok([
        {
          contractAddress: address,
          tokenName: token.name,
          symbol: token.symbol,
          divisor: String(token.decimals),
          tokenType: "ERC20",
          totalSupply: supply.toString(),
          tokenPriceUSD: price === null ? "" : String(price.usd),
        },
      ]);
    },
  };
}

/** `contract` `getabi`: the ABI configured for a protocol contract, as a JSON string. */
export function contractActions(ctx: EtherscanContext): EtherscanModules["contract"] {
  const abis = new Map<string, string>();
  for (const protocol of ctx.config.protocols) {
    for (const contract of protocol.contracts)
      abis.set(contract.address.toLowerCase(), JSON.stringify(contract.abi));
  }
  return {
    async getabi(params) {
      const abi = abis.get(addressParam(params));
      return abi === undefined ? notOk(ETHERSCAN_ERRORS.notVerified) : ok(abi);
    },
  };
}
