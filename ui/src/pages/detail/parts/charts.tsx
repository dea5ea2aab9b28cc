import { useSignals } from "@preact/signals-react/runtime";
import { Card, Flex, Grid, Heading, Spinner, Text } from "@radix-ui/themes";
import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import type uPlot from "uplot";
import { SERIES_COLORS, UPlotChart } from "../../../components/uplot-chart";
import { renderNumber } from "../../../lib/quota";
import { applied, dashboardLoading, OTHER_MODELS, series, type Metric } from "../../../stores/dashboard";
import { displayInCurrency, quotaPerUnit, renderQuota } from "../../../stores/status";

/** BUCKET_SECONDS is about one bucket of each granularity. */
const BUCKET_SECONDS: Record<string, number> = { hour: 3600, day: 86400, week: 7 * 86400 };

/**
 * dateLabel names a bucket by its start in local time. An hourly bucket is a whole UTC hour, which
 * starts at half past (or a quarter to) the hour in some time zones: its minutes are shown as they are.
 */
function dateLabel(ts: number, granularity: string): string {
  const d = new Date(ts * 1000);
  const md = `${d.getMonth() + 1}/${d.getDate()}`;
  return granularity === "hour" ? `${md} ${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}` : md;
}

/**
 * timeAxisValues labels the time axis in numbers, as the legend does, in every language (uPlot's
 * own labels are English: "6pm", "Nov 22"): hours as HH:mm with the date at midnight, days as M/D,
 * steps under a minute (a zoom) as HH:mm:ss.
 */
function timeAxisValues(_u: uPlot, ticks: number[], _axis: number, _space: number, incr: number): string[] {
  return ticks.map((ts) => {
    const d = new Date(ts * 1000);
    const md = `${d.getMonth() + 1}/${d.getDate()}`;
    if (incr >= 86400 || (incr >= 60 && d.getHours() === 0 && d.getMinutes() === 0)) return md;
    const hm = `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
    // A zoom of a few minutes steps by seconds.
    return incr < 60 ? `${hm}:${String(d.getSeconds()).padStart(2, "0")}` : hm;
  });
}

/** quotaDigits picks enough decimals for dollar amounts that step by incr quota units. */
function quotaDigits(incr: number): number {
  const dollars = Math.abs(incr) / quotaPerUnit.value;
  if (!(dollars > 0)) return 2;
  return Math.min(6, Math.max(2, Math.ceil(-Math.log10(dollars))));
}

/**
 * WHOLE_INCRS are the steps of an axis that counts (calls, tokens, quota units): 1, 2, 5, 10...
 * uPlot's own steps go below 1 for small counts, which labelled 0.5 and 1.5 as 1 and 2 again.
 */
const WHOLE_INCRS = Array.from({ length: 16 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

/**
 * legendDigits picks the decimals of a bucket's dollars in the legend: 2 from a dollar up, 4 below,
 * 6 (as the log list shows a call's cost) when 4 would round a spend to $0.0000.
 */
function legendDigits(quota: number): number {
  const dollars = Math.abs(quota) / quotaPerUnit.value;
  if (quota === 0 || dollars >= 1) return 2;
  return dollars < 0.00005 ? 6 : 4;
}

function axisValues(metric: Metric) {
  return (_u: uPlot, ticks: number[], _axis: number, _space: number, incr: number) =>
    metric === "quota" && displayInCurrency.value ? ticks.map((v) => renderQuota(v, quotaDigits(incr))) : ticks.map((v) => renderNumber(Math.round(v)));
}

function MetricChart({ metric, title }: { metric: Metric; title: string }) {
  useSignals();
  const { t } = useTranslation();
  const s = series.value;
  const granularity = applied.value.granularity;
  const format = metric === "quota" ? (v: number) => renderQuota(v, legendDigits(v)) : (v: number) => String(Math.round(v));
  const names = s.models.map((m) => (m === OTHER_MODELS ? t("dashboard.other") : m));
  // The quota axis and legend read the display rule when drawn: a change of it draws the chart again.
  const inCurrency = displayInCurrency.value;
  const perUnit = quotaPerUnit.value;
  const options = useMemo<Omit<uPlot.Options, "width" | "height">>(
    () => ({
      scales: {
        x: {
          time: true,
          // One bucket alone gets a bucket's width on each side, not years.
          range: (_u: uPlot, min: number, max: number): uPlot.Range.MinMax => (min === max ? [min - BUCKET_SECONDS[granularity], max + BUCKET_SECONDS[granularity]] : [min, max]),
        },
      },
      cursor: { points: { size: 6 } },
      legend: { show: true },
      series: [
        { label: t("dashboard.time"), value: (_u: uPlot, v: number | null) => (v === null ? "-" : dateLabel(v, granularity)) },
        ...names.map((name, i) => ({
          label: name,
          stroke: SERIES_COLORS[i % SERIES_COLORS.length],
          width: 2,
          points: { show: s.times.length < 60 },
          value: (_u: uPlot, v: number | null) => (v === null ? "-" : format(v)),
        })),
      ],
      axes: [{ values: timeAxisValues }, { size: 80, values: axisValues(metric), ...(metric === "quota" && inCurrency ? {} : { incrs: WHOLE_INCRS }) }],
    }),
    // The series layout (names), granularity and display rule decide the options; values go through data.
    [names.join("\u0001"), granularity, metric, s.times.length < 60, t, inCurrency, perUnit],
  );
  const data = useMemo(() => [s.times, ...s.values[metric]] as uPlot.AlignedData, [s, metric]);
  return (
    <Card size="2">
      <Heading size="3" mb="2">
        {title}
      </Heading>
      {s.times.length === 0 && dashboardLoading.value ? (
        // A read in flight: its rows are not known yet, so "no data" would be a guess.
        <Flex justify="center" align="center" gap="2" py="6" aria-busy="true">
          <Spinner />
          <Text color="gray">{t("table.loading")}</Text>
        </Flex>
      ) : s.times.length === 0 ? (
        <Flex justify="center" py="6">
          <Text color="gray">{t("dashboard.empty")}</Text>
        </Flex>
      ) : (
        <UPlotChart options={options} data={data} testId={`detail-chart-${metric}`} label={title} />
      )}
    </Card>
  );
}

/** Charts draws quota, requests and tokens per model over time. */
export function Charts() {
  const { t } = useTranslation();
  return (
    <Grid columns="1" gap="3">
      <MetricChart metric="quota" title={t("dashboard.quotaChart")} />
      <MetricChart metric="count" title={t("dashboard.countChart")} />
      <MetricChart metric="token_used" title={t("dashboard.tokenChart")} />
    </Grid>
  );
}
