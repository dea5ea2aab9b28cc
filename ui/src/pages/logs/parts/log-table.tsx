import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Text } from "@radix-ui/themes";
import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import { DataTable, type Column } from "../../../components/data-table";
import { formatTimestamp } from "../../../components/format";
import { serverText } from "../../../i18n/server";
import { logs, logsLoading, type Row } from "../../../stores/logs";
import { displayInCurrency, quotaPerUnit, renderQuota } from "../../../stores/status";
import { isAdmin } from "../../../stores/user";
import { isConsume } from "../billing";
import { ModelCell, retryChain, TimingCell, TypeBadge, UserCell } from "./cells";
import { LogDetail } from "./log-detail";

/** Stamp shows a date and time, on two lines when the column is narrow, never breaking the date at its dashes. */
function Stamp({ text }: { text: string }) {
  const [date, time] = text.split(" ");
  return (
    <>
      <span className="nowrap">{date}</span> <span className="nowrap">{time}</span>
    </>
  );
}

/** LogTable lists the entries; a row expands to its details and billing process. */
export function LogTable() {
  useSignals();
  const { t } = useTranslation();
  const admin = isAdmin.value;
  // The same columns from one render to the next, so that entries pushed onto the page draw only
  // their own rows, not the page's hundred; they change with the language, the role and how quota
  // is shown.
  const inCurrency = displayInCurrency.value;
  const perUnit = quotaPerUnit.value;
  const columns = useMemo(
    (): Column<Row>[] => [
      { key: "time", header: t("logs.col.time"), cell: (l) => <Stamp text={formatTimestamp(l.created_at)} /> },
      {
        key: "channel",
        header: t("logs.col.channel"),
        hidden: !admin,
        cell: (l) => (isConsume(l) && l.channel ? <Badge color="gray">{l.channel}</Badge> : null),
      },
      { key: "user", header: t("logs.col.user"), hidden: !admin, cell: (l) => <UserCell log={l} /> },
      {
        key: "token",
        header: t("logs.col.token"),
        cell: (l) =>
          isConsume(l) && l.token_name ? (
            <Badge color="gray" variant="outline" className="badge-wrap" data-testid="log-token">
              {l.token_name}
            </Badge>
          ) : null,
      },
      { key: "type", header: t("logs.col.type"), cell: (l) => <TypeBadge type={l.type} /> },
      { key: "model", header: t("logs.col.model"), cell: (l) => (isConsume(l) ? <ModelCell log={l} /> : null) },
      { key: "timing", header: t("logs.col.useTime"), cell: (l) => (isConsume(l) ? <TimingCell log={l} /> : null) },
      { key: "prompt", header: t("logs.col.prompt"), cell: (l) => (isConsume(l) ? l.prompt_tokens : null) },
      { key: "completion", header: t("logs.col.completion"), cell: (l) => (isConsume(l) && l.completion_tokens > 0 ? l.completion_tokens : null) },
      {
        key: "quota",
        header: t("logs.col.quota"),
        cell: (l) => (isConsume(l) ? <span data-testid="log-quota">{renderQuota(l.quota, 6)}</span> : null),
      },
      {
        key: "retry",
        header: t("logs.col.retry"),
        hidden: !admin,
        cell: (l) => {
          const chain = isConsume(l) ? retryChain(l) : "";
          return chain ? (
            <Text size="2" className="nowrap">
              {t("logs.retryChain", { chain })}
            </Text>
          ) : null;
        },
      },
      {
        key: "detail",
        header: t("logs.col.detail"),
        cell: (l) => (
          <Text size="2" className="clamp-2 log-content" title={serverText(l.content)}>
            {serverText(l.content)}
          </Text>
        ),
      },
    ],
    // renderQuota reads the display rule itself: the rule is named so that a change draws again.
    [t, admin, inCurrency, perUnit],
  );
  return (
    <DataTable
      rows={logs.value}
      columns={columns}
      rowKey={(l) => l.key}
      loading={logsLoading.value}
      expansion={(l) => <LogDetail log={l} />}
      testId="log-table"
      compact
      rowTestId={() => "log-row"}
    />
  );
}
