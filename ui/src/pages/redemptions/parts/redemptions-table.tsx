import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { REDEMPTION_DISABLED, REDEMPTION_UNUSED, REDEMPTION_USED, type Redemption } from "../../../api/redemptions";
import { DataTable, type Column } from "../../../components/data-table";
import { formatTimestamp } from "../../../components/format";
import { redemptionsList, selectedRedemptions } from "../../../stores/redemptions";
import { renderQuota } from "../../../stores/status";
import { RowActions } from "./row-actions";

function StatusBadge({ status }: { status: number }) {
  const { t } = useTranslation();
  switch (status) {
    case REDEMPTION_UNUSED:
      return <Badge color="green">{t("redemption.statusUnused")}</Badge>;
    case REDEMPTION_DISABLED:
      return <Badge color="red">{t("redemption.statusDisabled")}</Badge>;
    case REDEMPTION_USED:
      return <Badge color="gray">{t("redemption.statusUsed")}</Badge>;
    default:
      return <Badge color="gray">{t("redemption.statusUnknown")}</Badge>;
  }
}

/** RedemptionsTable lists the current page of codes with selection for "copy selected". */
export function RedemptionsTable() {
  useSignals();
  const { t } = useTranslation();
  const columns: Column<Redemption>[] = [
    { key: "id", header: t("redemption.colId"), cell: (r) => r.id, width: "64px" },
    { key: "name", header: t("redemption.colName"), cell: (r) => <Text data-testid="redemption-name">{r.name}</Text> },
    { key: "status", header: t("redemption.colStatus"), cell: (r) => <StatusBadge status={r.status} /> },
    { key: "quota", header: t("redemption.colQuota"), cell: (r) => renderQuota(r.quota ?? 0) },
    { key: "created", header: t("redemption.colCreated"), cell: (r) => <span className="nowrap">{formatTimestamp(r.created_time)}</span> },
    { key: "redeemer", header: t("redemption.colRedeemer"), cell: (r) => (r.used_user_id ? r.used_user_id : t("redemption.none")) },
    { key: "actions", header: t("redemption.colActions"), cell: (r) => <RowActions row={r} /> },
  ];
  return (
    <DataTable
      rows={redemptionsList.visible.value}
      columns={columns}
      rowKey={(r) => r.id}
      loading={redemptionsList.loading.value}
      selected={selectedRedemptions.value}
      onSelectedChange={(next) => (selectedRedemptions.value = next)}
      testId="redemptions-table"
      rowTestId={(r) => `redemption-row-${r.id}`}
      muted={(r) => r.status !== REDEMPTION_UNUSED}
    />
  );
}
