import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Text } from "@radix-ui/themes";
import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import type { Token } from "../../../api/tokens";
import { DataTable, type Column } from "../../../components/data-table";
import { formatTimestamp } from "../../../components/format";
import { keepRowFocus } from "../../../lib/keep-focus";
import { displayInCurrency, quotaPerUnit, renderQuota } from "../../../stores/status";
import { selectedTokens, selectTokens, setStatus, shownTokens, statusChanging, TOKEN_ENABLED, tokensLoading } from "../../../stores/tokens";
import { deleteTarget, openEditor } from "../dialogs";
import { ChatButton } from "./chat-button";
import { KeyCell, TokenStatus } from "./cells";

/** StatusButton enables or disables a token; it is busy while the change is in flight, and keeps the keyboard after it. */
function StatusButton({ token: x }: { token: Token }) {
  useSignals();
  const { t } = useTranslation();
  const busy = statusChanging.value.has(x.id);
  return x.status === TOKEN_ENABLED ? (
    <Button size="1" variant="soft" color="orange" loading={busy} onClick={(e) => void keepRowFocus(e.currentTarget, setStatus(x.id, 2))} data-testid="disable-token">
      {t("tokens.row.disable")}
    </Button>
  ) : (
    <Button size="1" variant="soft" color="green" loading={busy} onClick={(e) => void keepRowFocus(e.currentTarget, setStatus(x.id, 1))} data-testid="enable-token">
      {t("tokens.row.enable")}
    </Button>
  );
}

/** TokenTable lists the tokens with their quota, times, key and actions. */
export function TokenTable() {
  useSignals();
  const { t } = useTranslation();
  // The same columns from one render to the next, so that a live update of a few tokens draws only
  // their rows; they change with the language and with how quota is shown.
  const inCurrency = displayInCurrency.value;
  const perUnit = quotaPerUnit.value;
  const columns = useMemo(
    (): Column<Token>[] => [
      {
        key: "name",
        header: t("tokens.col.name"),
        cell: (x) => (
          <Text weight="medium" data-testid="token-name">
            {x.name}
          </Text>
        ),
      },
      { key: "status", header: t("tokens.col.status"), cell: (x) => <TokenStatus token={x} /> },
      { key: "used", header: t("tokens.col.used"), cell: (x) => renderQuota(x.used_quota ?? 0) },
      { key: "remain", header: t("tokens.col.remain"), cell: (x) => (x.unlimited_quota ? t("tokens.unlimited") : renderQuota(x.remain_quota ?? 0)) },
      { key: "created", header: t("tokens.col.created"), cell: (x) => <span className="nowrap">{formatTimestamp(x.created_time)}</span> },
      {
        key: "expires",
        header: t("tokens.col.expires"),
        cell: (x) => <span className="nowrap">{x.expired_time === -1 ? t("tokens.never") : formatTimestamp(x.expired_time)}</span>,
      },
      { key: "key", header: t("tokens.col.key"), cell: (x) => <KeyCell token={x} /> },
      {
        key: "actions",
        header: t("tokens.col.actions"),
        cell: (x) => (
          <Flex gap="1" align="center" wrap="wrap">
            <ChatButton token={x} />
            <StatusButton token={x} />
            <Button size="1" variant="soft" color="gray" onClick={() => openEditor(x.id)} data-testid="edit-token">
              {t("tokens.row.edit")}
            </Button>
            <Button size="1" variant="soft" color="red" onClick={() => (deleteTarget.value = x)} data-testid="delete-token">
              {t("tokens.row.delete")}
            </Button>
          </Flex>
        ),
      },
    ],
    [t, inCurrency, perUnit],
  );
  return (
    <DataTable
      rows={shownTokens.value}
      columns={columns}
      rowKey={(x) => x.id}
      loading={tokensLoading.value}
      selected={selectedTokens.value}
      onSelectedChange={selectTokens}
      testId="token-table"
      rowTestId={(x) => `token-row-${x.id}`}
    />
  );
}
