import { useSignals } from "@preact/signals-react/runtime";
import { Text } from "@radix-ui/themes";
import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import type { Channel } from "../../../api/channels";
import { DataTable, type Column } from "../../../components/data-table";
import { InlineNumber } from "../../../components/inline-number";
import { Tooltip } from "../../../components/ui/tooltip";
import {
  bulkDeleteMode,
  CHANNEL_ENABLED,
  channelsLoading,
  PRIORITY_MIN,
  selectedChannels,
  setChannelPriority,
  setChannelWeight,
  shownChannels,
  WEIGHT_MIN,
} from "../../../stores/channels";
import { displayInCurrency, quotaPerUnit } from "../../../stores/status";
import { GroupBadges, ResponseTime, StatusBadge, TypeBadge, UsageCell } from "./cells";
import { RowActions } from "./row-actions";

/** ChannelTable lists the channels; disabled rows are greyed, priority and weight are edited in place. */
export function ChannelTable() {
  useSignals();
  const { t } = useTranslation();
  // The same columns from one render to the next, so that a live update of a few channels draws only
  // their rows; they change with the language and with how quota is shown.
  const inCurrency = displayInCurrency.value;
  const perUnit = quotaPerUnit.value;
  const columns = useMemo(
    (): Column<Channel>[] => [
      { key: "id", header: t("channels.col.id"), cell: (c) => c.id, width: "56px" },
      {
        key: "name",
        header: t("channels.col.name"),
        cell: (c) => (
          <Text weight="medium" data-testid="channel-name">
            {c.name}
          </Text>
        ),
      },
      { key: "group", header: t("channels.col.group"), cell: (c) => <GroupBadges group={c.group} /> },
      { key: "type", header: t("channels.col.type"), cell: (c) => <TypeBadge type={c.type} /> },
      { key: "status", header: t("channels.col.status"), cell: (c) => <StatusBadge channel={c} /> },
      { key: "rt", header: t("channels.col.responseTime"), cell: (c) => <ResponseTime channel={c} /> },
      { key: "usage", header: t("channels.col.usage"), cell: (c) => <UsageCell channel={c} /> },
      {
        key: "priority",
        header: <Tooltip content={t("channels.priorityTip")}>{<span>{t("channels.col.priority")}</span>}</Tooltip>,
        cell: (c) => (
          <InlineNumber value={c.priority} min={PRIORITY_MIN} label={t("channels.col.priority")} onCommit={(v) => setChannelPriority(c.id, v)} testId="channel-priority" />
        ),
      },
      {
        key: "weight",
        header: <Tooltip content={t("channels.weightTip")}>{<span>{t("channels.col.weight")}</span>}</Tooltip>,
        cell: (c) => <InlineNumber value={c.weight} min={WEIGHT_MIN} label={t("channels.col.weight")} onCommit={(v) => setChannelWeight(c.id, v)} testId="channel-weight" />,
      },
      { key: "actions", header: t("channels.col.actions"), cell: (c) => <RowActions channel={c} /> },
    ],
    [t, inCurrency, perUnit],
  );
  const bulk = bulkDeleteMode.value;
  return (
    <DataTable
      rows={shownChannels.value}
      columns={columns}
      rowKey={(c) => c.id}
      loading={channelsLoading.value}
      muted={(c) => c.status !== CHANNEL_ENABLED}
      selected={bulk ? selectedChannels.value : undefined}
      onSelectedChange={bulk ? (next) => (selectedChannels.value = next) : undefined}
      testId="channel-table"
      rowTestId={(c) => `channel-row-${c.id}`}
    />
  );
}
