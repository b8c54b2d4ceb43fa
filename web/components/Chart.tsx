import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { formatCompact } from "../format.ts";

export type ChartSeries = {
  /** the field it draws, listed in `data-series` */
  key: string;
  label: string;
  values: (number | null)[];
  /** the y axis: series sharing a unit share one */
  unit: "count" | "usd";
  /** a CSS variable holding its colour */
  color: string;
  dash?: boolean;
};

const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/**
 * A time-series chart (uPlot: canvas, fast on long series) with one y axis per unit, sized to its container
 * and redrawn with the theme's colours. `chart` with `data-series` (SPEC §12); the legend names each series
 * in words and dashes tell them apart, so colour is not the only signal.
 */
export function Chart(props: { title: string; times: number[]; series: ChartSeries[]; theme: string }) {
  const box = useRef<HTMLDivElement>(null);
  const { times, series, title, theme } = props;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const units = [...new Set(series.map((s) => s.unit))];
    const axisColor = css("--muted");
    const grid = css("--border");
    const options: uPlot.Options = {
      width: Math.max(280, el.clientWidth),
      height: 220,
      scales: { x: { time: true } },
      axes: [
        { stroke: axisColor, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
        ...units.map((unit, i) => ({
          scale: unit,
          side: i === 0 ? 3 : 1,
          stroke: axisColor,
          grid: { show: i === 0, stroke: grid, width: 1 },
          ticks: { stroke: grid },
          size: 56,
          values: (_u: uPlot, ticks: number[]) =>
            ticks.map((t) => (unit === "usd" ? `$${formatCompact(t)}` : formatCompact(t))),
        })),
      ] as uPlot.Axis[],
      series: [
        { label: "Time" },
        ...series.map((s) => ({
          label: s.label,
          scale: s.unit,
          stroke: css(s.color),
          width: 2,
          ...(s.dash && { dash: [6, 4] }),
          value: (_u: uPlot, v: number | null) =>
            v === null ? "—" : s.unit === "usd" ? `$${formatCompact(v)}` : formatCompact(v),
        })),
      ],
      legend: { show: true },
    };
    const plot = new uPlot(options, [times, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(280, el.clientWidth), height: 220 }),
    );
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, theme]);
  return (
    <figure class="chart" data-testid="chart" data-series={series.map((s) => s.key).join(",")}>
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: ${series.map((s) => s.label).join(", ")}`} />
    </figure>
  );
}
