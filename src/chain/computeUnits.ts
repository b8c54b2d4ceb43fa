/**
 * Estimated Alchemy compute units per JSON-RPC method (Alchemy's published price list, rounded to the
 * values we use for capacity planning). Methods not listed cost `DEFAULT_COMPUTE_UNITS`.
 * @see https://docs.alchemy.com/reference/compute-unit-costs
 */
export const COMPUTE_UNITS: Readonly<Record<string, number>> = {
  eth_getLogs: 60,
  eth_getTransactionByHash: 20,
  eth_getTransactionReceipt: 20,
  eth_getBlockByNumber: 20,
  eth_getBlockByHash: 20,
  eth_getBlockReceipts: 20,
  eth_call: 26,
  eth_blockNumber: 10,
  eth_chainId: 0,
  eth_getBalance: 20,
  eth_getCode: 20,
};

export const DEFAULT_COMPUTE_UNITS = 20;

/** The estimated compute units of one call of `method`. */
export function computeUnitsOf(method: string): number {
  return Object.hasOwn(COMPUTE_UNITS, method)
    ? (COMPUTE_UNITS[method] ?? DEFAULT_COMPUTE_UNITS)
    : DEFAULT_COMPUTE_UNITS;
}
