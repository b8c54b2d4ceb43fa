import { api, type Tx } from "../api.ts";
import { Age } from "../components/Age.tsx";
import { Args } from "../components/Args.tsx";
import { Copy } from "../components/Copy.tsx";
import { AddressLink, Status, To } from "../components/Links.tsx";
import { Empty, Failed, Loading } from "../components/States.tsx";
import { Fmt } from "../components/Text.tsx";
import { formatEther, formatFee, formatTime, formatUnits, formatUsd } from "../format.ts";
import { labelOf, protocolNames } from "../labels.ts";
import { useAsync } from "../useAsync.ts";
import { NotFoundPage } from "./NotFound.tsx";

/** `/tx/:hash` (SPEC §12): everything protoscan stored of one transaction. */
export function TxPage({ hash }: { hash: string }) {
  const tx = useAsync(() => api.tx(hash), [hash]);
  if (tx.state === "loading") return <Loading what="the transaction" />;
  if (tx.state === "error") {
    if (tx.error.status === 404) return <NotFoundPage what={`No transaction ${hash} is stored here.`} />;
    return <Failed what="the transaction" error={tx.error} />;
  }
  return <TxView tx={tx.data} />;
}

function TxView({ tx }: { tx: Tx }) {
  const to = labelOf(tx.toAddress);
  return (
    <>
      <h1>Transaction</h1>
      <p class="hex hash-line">
        <span class="mono break">{tx.txHash}</span>
        <Copy text={tx.txHash} what="transaction hash" />
      </p>
      <dl class="facts panel">
        <dt>Status</dt>
        <dd>
          <Status ok={tx.status} testid="tx-status" />
        </dd>
        <dt>Block</dt>
        <dd>
          <a href={`/block/${tx.blockNumber}`}>{tx.blockNumber}</a>{" "}
          <span class="muted">(index {tx.transactionIndex})</span>
        </dd>
        <dt>Time</dt>
        <dd>
          {formatTime(tx.blockTimestamp)} (<Age iso={tx.blockTimestamp} />)
        </dd>
        <dt>From</dt>
        <dd>
          <AddressLink address={tx.fromAddress} />
        </dd>
        <dt>To</dt>
        <dd>
          <AddressLink address={tx.toAddress} />
          {to?.kind === "contract" && <span class="muted"> (contract {to.name})</span>}
        </dd>
        <dt>Protocol</dt>
        <dd>
          <a href={`/protocol/${tx.protocol}`} data-testid="tx-protocol">
            {protocolNames.value.get(tx.protocol) ?? tx.protocol}
          </a>
        </dd>
        <dt>Action</dt>
        <dd>
          <span class="pill">{tx.actionType}</span>
        </dd>
        <dt>Function</dt>
        <dd>
          <span class="mono" data-testid="tx-function">
            {tx.functionName}
          </span>
          <Args args={tx.decodedData.args} />
        </dd>
        <dt>Value</dt>
        <dd>
          <Fmt value={formatEther(tx.valueWei)} />
        </dd>
        <dt>Fee</dt>
        <dd>
          <Fmt value={formatFee(tx.gasUsed, tx.gasPrice)} />{" "}
          <span class="muted">
            ({tx.gasUsed} gas at {formatUnits(tx.gasPrice, 9, 3).text} gwei)
          </span>
        </dd>
        <dt>USD at the time</dt>
        <dd>
          <Fmt value={formatUsd(tx.valueUsd)} testid="tx-value-usd" />
        </dd>
      </dl>
      <section class="panel" aria-labelledby="transfers-title">
        <h2 id="transfers-title">Token transfers ({tx.tokenTransfers.length})</h2>
        {tx.tokenTransfers.length === 0 ? (
          <Empty>No transfer of a tracked token.</Empty>
        ) : (
          <ul class="rows">
            {tx.tokenTransfers.map((t) => (
              <li
                key={t.logIndex}
                class="row"
                data-testid="transfer-row"
                data-tx-hash={tx.txHash}
                data-log-index={t.logIndex}
              >
                <AddressLink address={t.fromAddress} copy={false} />
                <To />
                <AddressLink address={t.toAddress} copy={false} />
                <span class="amount">
                  <Fmt value={formatUnits(t.amount, t.decimals)} />{" "}
                  <a href={`/token/${t.tokenAddress}`}>{t.tokenSymbol}</a>
                </span>
                {"valueUsd" in t && <Fmt value={formatUsd((t as { valueUsd: number | null }).valueUsd)} />}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section class="panel" aria-labelledby="events-title">
        <h2 id="events-title">Events ({tx.decodedData.events.length})</h2>
        {tx.decodedData.events.length === 0 ? (
          <Empty>No decoded event.</Empty>
        ) : (
          <ul class="rows">
            {tx.decodedData.events.map((e) => (
              <li key={e.logIndex} class="row event" data-testid="event-row">
                <div class="row-main">
                  <span class="mono strong">{e.name}</span>
                  <span class="muted">log {e.logIndex}, emitted by</span>
                  <AddressLink address={e.address} copy={false} />
                </div>
                <Args args={e.args} />
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
