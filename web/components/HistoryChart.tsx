import { useMemo } from "preact/hooks";
import type { History } from "../api.ts";
import { theme } from "../theme.ts";
import type { Async } from "../useAsync.ts";
import { Chart, type ChartSeries } from "./Chart.tsx";
import { Empty, Failed, Loading } from "./States.tsx";

export type HistoryField = "transactionCount" | "uniqueUsers" | "volumeUsd" | "tvlUsd";
const SERIES: Record<HistoryField, Omit<ChartSeries, "values" | "key">> = {
  transactionCount: { label: "Transactions", unit: "count", color: "--series-1" },
  uniqueUsers: { label: "Users", unit: "count", color: "--series-3", dash: true },
  volumeUsd: { label: "Volume (USD)", unit: "usd", color: "--series-2", dash: true },
  tvlUsd: { label: "TVL (USD)", unit: "usd", color: "--series-4" },
};

/** A chart of history buckets (SPEC §10.3) with its loading, error and empty states. */
export function HistoryChart(props: { title: string; history: Async<History>; fields: HistoryField[] }) {
  const { title, history, fields } = props;
  const data = history.state === "ok" ? history.data : null;
  const drawn = useMemo(() => {
    if (!data) return null;
    const points = data.points;
    if (points.length === 0 || points.every((p) => p.transactionCount === 0 && !p.tvlUsd)) return null;
    return {
      times: points.map((p) => Date.parse(p.time) / 1000),
      series: fields.map((key) => ({
        key,
        ...SERIES[key],
        values: points.map((p) => p[key] ?? null),
      })),
    };
  }, [data]);
  if (history.state === "loading") return <Loading what="the chart" />;
  if (history.state === "error") return <Failed what={`the chart "${title}"`} error={history.error} />;
  if (!drawn) return <Empty>No activity in this period.</Empty>;
  return <Chart title={title} times={drawn.times} series={drawn.series} theme={theme.value} />;
}
