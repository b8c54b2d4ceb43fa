import { api, type Overview } from "../api.ts";
import { Age } from "../components/Age.tsx";
import { HistoryChart } from "../components/HistoryChart.tsx";
import { LiveFeed } from "../components/LiveFeed.tsx";
import { Failed, Loading } from "../components/States.tsx";
import { Fmt } from "../components/Text.tsx";
import { formatInteger, formatUsd } from "../format.ts";
import { useAsync } from "../useAsync.ts";

const DAY = 86_400_000;

/**
 * `/` (SPEC §12): one card per protocol, the indexer's state, 30 days of daily transactions and volume, and
 * the latest transactions, live. Cards and the indexer refresh every 10 s.
 */
export function HomePage() {
  const overview = useAsync(() => api.overview(), [], 10_000);
  const history = useAsync(() => api.statsHistory("day", new Date(Date.now() - 30 * DAY).toISOString()), []);
  return (
    <>
      <h1>Explorer</h1>
      {overview.state === "loading" && <Loading what="the protocols" />}
      {overview.state === "error" && <Failed what="the protocols" error={overview.error} />}
      {overview.state === "ok" && <Protocols overview={overview.data} />}
      <div class="grid-2">
        <section class="panel" aria-labelledby="history-title">
          <h2 id="history-title">Daily transactions and volume, 30 days</h2>
          <HistoryChart
            title="All protocols, per day"
            history={history}
            fields={["transactionCount", "volumeUsd"]}
          />
        </section>
        <section class="panel" aria-labelledby="indexer-title">
          <h2 id="indexer-title">Indexer</h2>
          {overview.state === "loading" && <Loading what="the indexer's state" />}
          {overview.state === "error" && <Failed what="the indexer's state" error={overview.error} />}
          {overview.state === "ok" && <IndexerState overview={overview.data} />}
        </section>
      </div>
      <LiveFeed />
    </>
  );
}

function Protocols({ overview }: { overview: Overview }) {
  if (overview.protocols.length === 0) return <p class="state state-empty">No protocol is configured.</p>;
  return (
    <ul class="cards">
      {overview.protocols.map((p) => (
        <li key={p.id} class="card" data-testid="protocol-card" data-protocol={p.id}>
          <h2>
            <a href={`/protocol/${p.id}`}>{p.name}</a>
          </h2>
          <dl class="stats">
            <div>
              <dt>TVL</dt>
              <dd>
                <Fmt value={formatUsd(p.tvl)} testid="stat-tvl" />
              </dd>
            </div>
            <div>
              <dt>Volume 24 h</dt>
              <dd>
                <Fmt value={formatUsd(p.dailyVolume)} testid="stat-volume" />
              </dd>
            </div>
            <div>
              <dt>Users</dt>
              <dd>
                <span data-testid="stat-users" title={String(p.uniqueUsers)}>
                  {formatInteger(p.uniqueUsers)}
                </span>
              </dd>
            </div>
            <div>
              <dt>Transactions</dt>
              <dd>
                <span data-testid="stat-txcount" title={String(p.transactionCount)}>
                  {formatInteger(p.transactionCount)}
                </span>
              </dd>
            </div>
          </dl>
        </li>
      ))}
    </ul>
  );
}

function IndexerState({ overview }: { overview: Overview }) {
  const { indexer, totals } = overview;
  const lag = indexer.lagBlocks;
  return (
    <dl class="facts">
      <dt>Indexed block</dt>
      <dd>
        {indexer.indexedBlock === null ? (
          "none yet"
        ) : (
          <a href={`/block/${indexer.indexedBlock}`}>{formatInteger(indexer.indexedBlock)}</a>
        )}
      </dd>
      <dt>Chain head</dt>
      <dd>{indexer.chainHead === null ? "unknown" : formatInteger(indexer.chainHead)}</dd>
      <dt>Lag</dt>
      <dd>
        {lag === null
          ? "unknown"
          : lag === 0
            ? "caught up (0 blocks)"
            : `${formatInteger(lag)} blocks behind`}
      </dd>
      <dt>Last cycle</dt>
      <dd>{indexer.lastRunAt ? <Age iso={indexer.lastRunAt} /> : "not yet"}</dd>
      <dt>Stored</dt>
      <dd>
        {formatInteger(totals.transactions)} transactions, {formatInteger(totals.tokenTransfers)} token
        transfers, {formatInteger(totals.addresses)} addresses
      </dd>
    </dl>
  );
}
