import { useSignals } from "@preact/signals-react/runtime";
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { theme } from "../stores/theme";
import "./uplot-chart.css";

/** SERIES_COLORS are the line colours, readable in light and dark mode. */
export const SERIES_COLORS = ["#3e63dd", "#e5484d", "#30a46c", "#f76b15", "#8e4ec6", "#12a594", "#d6409f", "#ffc53d", "#8d8d8d"];

/** UPlotChartProps configure one chart; width follows the container. */
export interface UPlotChartProps {
  /** options are uPlot's options without size and axes colours, which the component fills in. */
  options: Omit<uPlot.Options, "width" | "height">;
  data: uPlot.AlignedData;
  height?: number;
  testId?: string;
  label?: string;
}

function cssColor(el: Element, name: string, fallback: string): string {
  const v = getComputedStyle(el).getPropertyValue(name).trim();
  return v || fallback;
}

/** UPlotChart draws a uPlot chart that resizes with its container and is re-created on theme changes. */
export function UPlotChart({ options, data, height = 260, testId, label }: UPlotChartProps) {
  useSignals();
  const appearance = theme.value;
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(data);
  latest.current = data;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const text = cssColor(el, "--gray-11", appearance === "dark" ? "#b4b4b4" : "#646464");
    const grid = cssColor(el, "--gray-a4", "rgba(128,128,128,0.2)");
    const axes = (options.axes ?? [{}, {}]).map((a) => ({ stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, ...a }));
    const u = new uPlot({ ...options, axes, width: Math.max(200, el.clientWidth), height }, latest.current, el);
    plot.current = u;
    const ro = new ResizeObserver(() => {
      const w = Math.max(200, el.clientWidth);
      if (w !== u.width) u.setSize({ width: w, height });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [options, height, appearance]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return <div ref={box} className="uplot-chart" data-testid={testId} role="figure" aria-label={label} />;
}
