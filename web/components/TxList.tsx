import type { Tx } from "../api.ts";
import { formatUsd } from "../format.ts";
import { protocolNames } from "../labels.ts";
import { Age } from "./Age.tsx";
import { AddressLink, Status, To, TxLink } from "./Links.tsx";
import { Fmt } from "./Text.tsx";

/**
 * Transactions as rows (`tx-row` with `data-tx-hash`, SPEC §12): status, action and protocol at a glance,
 * then hash, block, age, from and to (named where configured) and the USD value at the time.
 */
export function TxList({ txs, fresh }: { txs: readonly Tx[]; fresh?: ReadonlySet<string> }) {
  return (
    <ul class="rows tx-rows">
      {txs.map((tx) => (
        <li
          key={tx.txHash}
          class={fresh?.has(tx.txHash) ? "row tx-row fresh" : "row tx-row"}
          data-testid="tx-row"
          data-tx-hash={tx.txHash}
        >
          <div class="row-main">
            <Status ok={tx.status} />
            <span class="pill" title="action">
              {tx.actionType}
            </span>
            <a class="pill pill-protocol" href={`/protocol/${tx.protocol}`} title="protocol">
              {protocolNames.value.get(tx.protocol) ?? tx.protocol}
            </a>
            <TxLink hash={tx.txHash} copy={false} />
          </div>
          <div class="row-meta">
            <span>
              Block <a href={`/block/${tx.blockNumber}`}>{tx.blockNumber}</a>
            </span>
            <Age iso={tx.blockTimestamp} />
            <span class="parties">
              <AddressLink address={tx.fromAddress} copy={false} />
              <To />
              <AddressLink address={tx.toAddress} copy={false} />
            </span>
            <span class="fn mono" title="function">
              {tx.functionName}
            </span>
            {tx.valueUsd !== undefined && <Fmt value={formatUsd(tx.valueUsd)} />}
          </div>
        </li>
      ))}
    </ul>
  );
}
