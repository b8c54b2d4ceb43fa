import { api } from "../api.ts";
import { HistoryChart } from "../components/HistoryChart.tsx";
import { AddressLink } from "../components/Links.tsx";
import { Select } from "../components/Select.tsx";
import { Empty, Failed, Loading } from "../components/States.tsx";
import { Fmt } from "../components/Text.tsx";
import { TokenLogo } from "../components/TokenLogo.tsx";
import { TxSection } from "../components/TxSection.tsx";
import { formatInteger, formatUsd } from "../format.ts";
import { labelOf } from "../labels.ts";
import { here, withQuery } from "../router.ts";
import { useAsync } from "../useAsync.ts";
import { NotFoundPage } from "./NotFound.tsx";

const HOUR = 3_600_000;
/** Chart ranges (in the URL as `range`): the bucket size and how far back; `all` is the last 1,000 days. */
const RANGES = {
  "24h": { label: "24 h", interval: "hour", span: 24 * HOUR },
  "7d": { label: "7 d", interval: "hour", span: 7 * 24 * HOUR },
  "30d": { label: "30 d", interval: "day", span: 30 * 24 * HOUR },
  all: { label: "All", interval: "day", span: 999 * 24 * HOUR },
} as const;
type Range = keyof typeof RANGES;

const ACTIONS = [
  "swap",
  "addLiquidity",
  "removeLiquidity",
  "transfer",
  "approve",
  "deposit",
  "withdraw",
  "stake",
  "unstake",
  "claim",
  "mint",
  "burn",
  "contractCall",
  "unknown",
];

/** `/protocol/:id` (SPEC §12): statistics, history charts over a chosen range, contracts, tokens, transactions. */
export function ProtocolPage({ id }: { id: string }) {
  const query = here.value.query;
  const range: Range = (query.get("range") as Range | null) ?? "30d";
  const chosen = RANGES[range] ?? RANGES["30d"];
  const cursor = query.get("cursor");
  const action = query.get("action");
  const stats = useAsync(() => api.protocolStats(id), [id], 10_000);
  const list = useAsync(() => api.protocols(), []);
  const history = useAsync(
    () => api.protocolHistory(id, chosen.interval, new Date(Date.now() - chosen.span).toISOString()),
    [id, range],
  );
  const page = useAsync(() => api.protocolTransactions(id, cursor, action), [id, cursor, action]);
  if (stats.state === "loading") return <Loading what="the protocol" />;
  if (stats.state === "error") {
    if (stats.error.status === 404) return <NotFoundPage what={`No protocol "${id}" is configured.`} />;
    return <Failed what="the protocol" error={stats.error} />;
  }
  const s = stats.data;
  const config = list.state === "ok" ? list.data.protocols.find((p) => p.id === s.protocol) : undefined;
  return (
    <>
      <h1>{config?.name ?? s.protocol}</h1>
      <dl class="stats panel">
        <div>
          <dt>TVL</dt>
          <dd>
            <Fmt value={formatUsd(s.tvl)} testid="stat-tvl" />
          </dd>
        </div>
        <div>
          <dt>Volume 24 h</dt>
          <dd>
            <Fmt value={formatUsd(s.dailyVolume)} testid="stat-volume" />
          </dd>
        </div>
        <div>
          <dt>Users</dt>
          <dd data-testid="stat-users" title={String(s.uniqueUsers)}>
            {formatInteger(s.uniqueUsers)}
          </dd>
        </div>
        <div>
          <dt>Transactions</dt>
          <dd data-testid="stat-txcount" title={String(s.transactionCount)}>
            {formatInteger(s.transactionCount)}
          </dd>
        </div>
      </dl>
      <section class="panel" aria-labelledby="charts-title">
        <header class="panel-head">
          <h2 id="charts-title">History</h2>
          <nav class="ranges" aria-label="chart range">
            {(Object.keys(RANGES) as Range[]).map((key) => (
              <a
                key={key}
                href={withQuery({ range: key === "30d" ? null : key })}
                aria-current={key === range ? "page" : undefined}
              >
                {RANGES[key].label}
              </a>
            ))}
          </nav>
        </header>
        <div class="grid-2">
          <HistoryChart
            title="Transactions and users"
            history={history}
            fields={["transactionCount", "uniqueUsers"]}
          />
          <HistoryChart title="Volume and TVL (USD)" history={history} fields={["volumeUsd", "tvlUsd"]} />
        </div>
      </section>
      <div class="grid-2">
        <section class="panel" aria-labelledby="contracts-title">
          <h2 id="contracts-title">Contracts</h2>
          {list.state === "loading" && <Loading what="the contracts" />}
          {list.state === "error" && <Failed what="the contracts" error={list.error} />}
          {config && config.contracts.length === 0 && <Empty>No contract is configured.</Empty>}
          {config && config.contracts.length > 0 && (
            <ul class="rows">
              {config.contracts.map((c) => (
                <li key={c.address} class="row">
                  <AddressLink address={c.address} />
                  <span class="muted">
                    {c.exclusive ? "indexed by polling" : "shared (track-tx, webhooks)"}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </section>
        <section class="panel" aria-labelledby="tokens-title">
          <h2 id="tokens-title">Tokens</h2>
          {config && config.tokens.length === 0 && <Empty>No token belongs to it.</Empty>}
          {config && config.tokens.length > 0 && (
            <ul class="rows">
              {config.tokens.map((address) => (
                <li key={address} class="row">
                  <TokenLogo address={address} />
                  <a href={`/token/${address}`}>{labelOf(address)?.name ?? address}</a>
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
      <TxSection
        title="Transactions"
        page={page}
        cursor={cursor}
        empty="No stored transaction for this filter."
        filter={
          <Select
            label="Action"
            param="action"
            value={action}
            options={ACTIONS.map((a) => ({ value: a, label: a }))}
          />
        }
      />
    </>
  );
}
