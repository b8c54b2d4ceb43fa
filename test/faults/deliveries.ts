import type { Hex } from "viem";
import { createJsonRpc } from "../../src/demo/demoClient.ts";
import {
  alchemyAddressActivity,
  alchemyHeaders,
  quicknodeDelivery,
  quicknodeHeaders,
} from "../../src/webhooks/_test/fixtures.ts";
import type { Random } from "../helpers/faultsRandom.ts";

export const ALCHEMY_KEY = "whsec_fault_simulation_key";
export const QN_TOKEN = "qn_fault_simulation_token";

/** One signed webhook delivery, ready to be posted (again: a duplicate is the very same request). */
export type Delivery = {
  provider: "alchemy" | "quicknode";
  /** the provider's delivery id: Alchemy's `id`, QuickNode's `x-qn-nonce` */
  id: string;
  body: string;
  /** Signed headers; QuickNode's carry the time of sending (a retry re-signs the same nonce). */
  headers(): Record<string, string>;
  hashes: Hex[];
};

type RpcReceipt = { transactionHash: Hex; blockNumber: Hex; from: Hex; to: Hex | null };

/**
 * A delivery announcing `hashes` (mined transactions), as Alchemy (ADDRESS_ACTIVITY, one activity per
 * transaction) or QuickNode Streams (`receipts` dataset: one entry per block, its receipts) would send it.
 */
export async function buildDelivery(
  random: Random,
  rpcUrl: string,
  hashes: readonly Hex[],
  serial: number,
): Promise<Delivery> {
  const rpc = createJsonRpc(rpcUrl);
  const receipts: RpcReceipt[] = [];
  for (const hash of hashes) {
    const receipt = (await rpc("eth_getTransactionReceipt", [hash])) as RpcReceipt | null;
    if (!receipt) throw new Error(`buildDelivery: ${hash} is not mined`);
    receipts.push(receipt);
  }
  if (random.chance(0.5)) {
    const id = `whevt_sim_${serial}_${random.int(0, 1e9)}`;
    const body = JSON.stringify(
      alchemyAddressActivity(
        receipts.map((r) => ({
          hash: r.transactionHash,
          blockNum: Number(r.blockNumber),
          fromAddress: r.from,
          toAddress: r.to ?? r.from,
          category: "external",
          value: 0,
          rawValue: 0n,
        })),
        { id },
      ),
    );
    return {
      provider: "alchemy",
      id,
      body,
      headers: () => alchemyHeaders(body, ALCHEMY_KEY),
      hashes: [...hashes],
    };
  }
  const byBlock = new Map<string, RpcReceipt[]>();
  for (const r of receipts) byBlock.set(r.blockNumber, [...(byBlock.get(r.blockNumber) ?? []), r]);
  const first = Math.min(...receipts.map((r) => Number(r.blockNumber)));
  const body = JSON.stringify(quicknodeDelivery("receipts", [...byBlock.values()], first));
  const nonce = `sim${serial}n${random.int(0, 1e9)}`;
  return {
    provider: "quicknode",
    id: nonce,
    body,
    headers: () => quicknodeHeaders(body, QN_TOKEN, { nonce }),
    hashes: [...hashes],
  };
}

/** POST a delivery; the HTTP status, or 0 when the server did not answer (down, restarting). */
export async function postDelivery(apiUrl: string, delivery: Delivery): Promise<number> {
  try {
    const response = await fetch(`${apiUrl}/api/webhooks/${delivery.provider}`, {
      method: "POST",
      headers: delivery.headers(),
      body: delivery.body,
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  }
}
