import { useMemo, useState } from "preact/hooks";
import { api, csv, type HoldersPage, type TokenDetailJson, type TransfersPage } from "../api.ts";
import { Age } from "../components/Age.tsx";
import { Chart } from "../components/Chart.tsx";
import { Copy } from "../components/Copy.tsx";
import { AddressLink, To, TxLink } from "../components/Links.tsx";
import { Pager } from "../components/Pager.tsx";
import { Empty, Failed, Loading } from "../components/States.tsx";
import { Fmt } from "../components/Text.tsx";
import { TokenLogo } from "../components/TokenLogo.tsx";
import { formatInteger, formatPrice, formatShare, formatUnits } from "../format.ts";
import { protocolNames } from "../labels.ts";
import { here, navigate, withQuery } from "../router.ts";
import { theme } from "../theme.ts";
import { type Async, useAsync } from "../useAsync.ts";
import { NotFoundPage } from "./NotFound.tsx";

const PAGE = 25;
const TIERS: Record<string, string> = { api: "price API", dex: "DEX pool", static: "static price" };

/** `/token/:address` (SPEC §12): price, supply, a price chart, holders with shares, transfers, CSV. */
export function TokenPage({ address }: { address: string }) {
  const offset = Number(here.value.query.get("hoffset") ?? 0) || 0;
  const cursor = here.value.query.get("tcursor");
  const party = here.value.query.get("party");
  const token = useAsync(() => api.token(address), [address]);
  const top = useAsync(() => api.holders(address, 0, 10), [address]);
  const holders = useAsync(() => api.holders(address, offset, PAGE), [address, offset]);
  const transfers = useAsync(() => api.transfers(address, cursor, party), [address, cursor, party]);
  const prices = useAsync(
    () => api.priceHistory(address, "hour", new Date(Date.now() - 7 * 86_400_000).toISOString()),
    [address],
  );
  if (token.state === "loading") return <Loading what="the token" />;
  if (token.state === "error") {
    if (token.error.status === 404) return <NotFoundPage what={`${address} is not a token tracked here.`} />;
    return <Failed what="the token" error={token.error} />;
  }
  const t = token.data;
  return (
    <>
      <h1 class="token-title">
        <TokenLogo address={t.address} size={40} />
        <span>
          {t.name} <span class="muted">({t.symbol})</span>
        </span>
        <span
          class="swatch"
          style={{ background: /^#[0-9a-f]{6}$/i.test(t.color) ? t.color : "transparent" }}
          title={`colour ${t.color}`}
        />
      </h1>
      <p class="hex hash-line">
        <span class="mono break">{t.address}</span>
        <Copy text={t.address} what="token address" />
      </p>
      <Facts t={t} top={top} />
      <section class="panel" aria-labelledby="price-title">
        <h2 id="price-title">Price, 7 days (hourly)</h2>
        <PriceChart prices={prices} />
      </section>
      <Holders holders={holders} offset={offset} decimals={t.decimals} />
      <Transfers transfers={transfers} cursor={cursor} party={party} symbol={t.symbol} />
      <p class="downloads">
        Download CSV:{" "}
        <a href={csv.tokenEvents(t.address)} download>
          transfers
        </a>{" "}
        ·{" "}
        <a href={csv.tokenHolders(t.address)} download>
          holders
        </a>
      </p>
    </>
  );
}

function Facts({ t, top }: { t: TokenDetailJson; top: Async<HoldersPage> }) {
  const topShare = top.state === "ok" ? top.data.holders.reduce((sum, h) => sum + h.share, 0) : null;
  return (
    <dl class="facts panel">
      <dt>Price</dt>
      <dd>
        <Fmt value={formatPrice(t.priceUsd)} testid="token-price" />
        {t.priceSource && <span class="muted"> from the {TIERS[t.priceSource] ?? t.priceSource}</span>}
        {t.priceUpdatedAt && (
          <span class="muted">
            , <Age iso={t.priceUpdatedAt} />
          </span>
        )}
      </dd>
      <dt>Total supply</dt>
      <dd>
        <Fmt value={formatUnits(t.totalSupply, t.decimals)} /> {t.symbol}
      </dd>
      <dt>Holders</dt>
      <dd>{formatInteger(t.holdersCount)}</dd>
      <dt>Transfers</dt>
      <dd>{formatInteger(t.transfersCount)}</dd>
      <dt>Protocol</dt>
      <dd>
        <a href={`/protocol/${t.protocol}`}>{protocolNames.value.get(t.protocol) ?? t.protocol}</a>
        {t.official ? " (official token)" : ""}
      </dd>
      <dt>Top 10 holders</dt>
      <dd>
        {topShare === null ? (
          "…"
        ) : (
          <span class="split">
            <span class="bar" aria-hidden="true">
              <span style={{ width: `${Math.min(100, topShare * 100)}%` }} />
            </span>
            top 10: {formatShare(topShare).text} · the rest: {formatShare(Math.max(0, 1 - topShare)).text}
          </span>
        )}
      </dd>
    </dl>
  );
}

function PriceChart({ prices }: { prices: Async<{ points: { time: string; priceUsd: number | null }[] }> }) {
  const data = prices.state === "ok" ? prices.data : null;
  const drawn = useMemo(() => {
    if (!data || data.points.every((p) => p.priceUsd === null)) return null;
    return {
      times: data.points.map((p) => Date.parse(p.time) / 1000),
      series: [
        {
          key: "priceUsd",
          label: "Price (USD)",
          unit: "usd" as const,
          color: "--series-1",
          values: data.points.map((p) => p.priceUsd),
        },
      ],
    };
  }, [data]);
  if (prices.state === "loading") return <Loading what="the price history" />;
  if (prices.state === "error") return <Failed what="the price history" error={prices.error} />;
  if (!drawn) return <Empty>No price known in this period.</Empty>;
  return <Chart title="Price in USD" times={drawn.times} series={drawn.series} theme={theme.value} />;
}

function Holders({
  holders,
  offset,
  decimals,
}: {
  holders: Async<HoldersPage>;
  offset: number;
  decimals: number;
}) {
  return (
    <section class="panel" aria-labelledby="holders-title">
      <h2 id="holders-title">Holders</h2>
      {holders.state === "loading" && <Loading what="the holders" />}
      {holders.state === "error" && <Failed what="the holders" error={holders.error} />}
      {holders.state === "ok" && holders.data.holders.length === 0 && <Empty>Nobody holds this token.</Empty>}
      {holders.state === "ok" && holders.data.holders.length > 0 && (
        <ol class="rows">
          {holders.data.holders.map((h) => (
            <li key={h.address} class="row" data-testid="holder-row" data-address={h.address}>
              <span class="rank">#{h.rank}</span>
              <AddressLink address={h.address} />
              <span class="amount">
                <Fmt value={formatUnits(h.balance, decimals)} />
              </span>
              <span class="share">
                <span class="bar" aria-hidden="true">
                  <span style={{ width: `${Math.min(100, h.share * 100)}%` }} />
                </span>
                <Fmt value={formatShare(h.share)} />
              </span>
            </li>
          ))}
        </ol>
      )}
      {holders.state === "ok" && (
        <Pager
          param="hoffset"
          next={offset + PAGE < holders.data.total ? String(offset + PAGE) : null}
          atStart={offset === 0}
        />
      )}
    </section>
  );
}

function Transfers(props: {
  transfers: Async<TransfersPage>;
  cursor: string | null;
  party: string | null;
  symbol: string;
}) {
  const { transfers, cursor, party, symbol } = props;
  const [text, setText] = useState(party ?? "");
  const filter = (event: Event) => {
    event.preventDefault();
    navigate(withQuery({ party: text.trim() || null, tcursor: null }));
  };
  return (
    <section class="panel" aria-labelledby="transfers-title">
      <header class="panel-head">
        <h2 id="transfers-title">Transfers</h2>
        <form class="filter" onSubmit={filter}>
          <label for="party">By address</label>
          <input
            id="party"
            value={text}
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
            placeholder="0x…"
            spellcheck={false}
          />
          <button type="submit">Filter</button>
        </form>
      </header>
      {transfers.state === "loading" && <Loading what="the transfers" />}
      {transfers.state === "error" && <Failed what="the transfers" error={transfers.error} />}
      {transfers.state === "ok" && transfers.data.events.length === 0 && <Empty>No transfer found.</Empty>}
      {transfers.state === "ok" && transfers.data.events.length > 0 && (
        <ul class="rows">
          {transfers.data.events.map((e) => (
            <li
              key={`${e.txHash}-${e.logIndex}`}
              class="row"
              data-testid="transfer-row"
              data-tx-hash={e.txHash}
              data-log-index={e.logIndex}
            >
              <div class="row-main">
                <TxLink hash={e.txHash} copy={false} />
                <Age iso={e.blockTimestamp} />
              </div>
              <div class="row-meta">
                <AddressLink address={e.fromAddress} copy={false} />
                <To />
                <AddressLink address={e.toAddress} copy={false} />
                <span class="amount">
                  <Fmt value={formatUnits(e.amount, e.decimals)} /> {symbol}
                </span>
              </div>
            </li>
          ))}
        </ul>
      )}
      {transfers.state === "ok" && (
        <Pager param="tcursor" next={transfers.data.nextCursor} atStart={cursor === null} />
      )}
    </section>
  );
}
