import { useSignals } from "@preact/signals-react/runtime";
import { Code, DataList, Flex, Text } from "@radix-ui/themes";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import type { LogEntry } from "../../../api/logs";
import { serverText } from "../../../i18n/server";
import { parseOther } from "../../../stores/logs";
import { quotaPerUnit, renderQuota } from "../../../stores/status";
import { isAdmin } from "../../../stores/user";
import { type Billing, billing, isConsume } from "../billing";
import { retryChain } from "./cells";

/** LogDetail is a log row's expansion: channel, details, models, request id and the billing process. */
export function LogDetail({ log }: { log: LogEntry }) {
  useSignals();
  const { t } = useTranslation();
  const o = parseOther(log.other);
  const rows: { label: string; value: ReactNode; testId?: string }[] = [];
  if (isAdmin.value && isConsume(log) && log.channel) {
    rows.push({ label: t("logs.detail.channel"), value: retryChain(log) || String(log.channel) });
  }
  if (log.content) rows.push({ label: t("logs.detail.content"), value: serverText(log.content) });
  if (o.admin_info?.operator) rows.push({ label: t("logs.detail.operator"), value: o.admin_info.operator, testId: "operator" });
  if (isConsume(log) && o.upstream_model) {
    rows.push({ label: t("logs.detail.requested"), value: log.model_name });
    rows.push({ label: t("logs.detail.upstream"), value: o.upstream_model });
  }
  if (log.group) rows.push({ label: t("logs.detail.group"), value: log.group });
  if (o.request_id) rows.push({ label: t("logs.detail.requestId"), value: <Code variant="ghost">{o.request_id}</Code> });
  if (isConsume(log) && (o.model_ratio !== undefined || o.model_price !== undefined)) {
    rows.push({
      label: t("logs.detail.billing"),
      testId: "billing",
      value: (
        <Flex direction="column" gap="1">
          <BillingLines b={billing(log, o, quotaPerUnit.value)} />
          <Text size="2" color="gray" data-testid="billing-quota">
            {t("logs.billing.quota", { quota: log.quota, amount: renderQuota(log.quota, 6) })}
          </Text>
        </Flex>
      ),
    });
  }
  return (
    <DataList.Root size="2" data-testid="log-detail">
      {rows.map((r) => (
        <DataList.Item key={r.label} data-testid={r.testId}>
          <DataList.Label minWidth="120px">{r.label}</DataList.Label>
          <DataList.Value>{r.value}</DataList.Value>
        </DataList.Item>
      ))}
    </DataList.Root>
  );
}

/** BillingLines prints the steps of one billing mode; the charged quota follows them. */
function BillingLines({ b }: { b: Billing }) {
  const { t } = useTranslation();
  const line = (key: string, testId?: string) => (
    <Text size="2" data-testid={testId}>
      {t(key, b)}
    </Text>
  );
  switch (b.mode) {
    case "ratio":
      return (
        <>
          {line("logs.billing.ratioPrices")}
          {line("logs.billing.ratio")}
        </>
      );
    case "audio":
      return (
        <>
          {line("logs.billing.audioPrices")}
          {line("logs.billing.audioText", "billing-text")}
          {line("logs.billing.audioAudio", "billing-audio")}
          {line("logs.billing.audioTotal", "billing-total")}
        </>
      );
    case "image":
      return (
        <>
          {b.known
            ? line(b.quality ? "logs.billing.imageQuality" : "logs.billing.image", "billing-image")
            : line("logs.billing.imageUnknown", "billing-image")}
          {line(b.price ? "logs.billing.imagePrice" : "logs.billing.imageRatio")}
        </>
      );
    case "price":
      return line(b.result ? "logs.billing.price" : "logs.billing.priceDollars");
  }
}
