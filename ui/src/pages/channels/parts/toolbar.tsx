import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Separator, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { Switch } from "../../../components/ui/switch";
import {
  bulkDeleteMode,
  channelsLoading,
  idSort,
  refreshChannels,
  selectedChannels,
  setBulkDeleteMode,
  setIdSort,
  testAllState,
  updatingAllBalances,
} from "../../../stores/channels";
import { toast } from "../../../stores/toast";
import { askConfirm, openEditor } from "../dialogs";

/** ChannelToolbar holds the page actions: add, refresh, sort, the confirmed bulk actions and bulk-delete mode. */
export function ChannelToolbar() {
  useSignals();
  const { t } = useTranslation();
  const selected = selectedChannels.value.size;
  return (
    <Flex gap="2" wrap="wrap" align="center" data-testid="channel-toolbar">
      <Button onClick={() => openEditor()} data-testid="add-channel">
        {t("channels.action.add")}
      </Button>
      <Button variant="soft" onClick={() => void refreshChannels()} loading={channelsLoading.value} data-testid="refresh-channels">
        {t("channels.action.refresh")}
      </Button>
      <Button variant="soft" onClick={() => askConfirm("testAll")} disabled={testAllState.value?.running} data-testid="test-all">
        {t("channels.action.testAll")}
      </Button>
      <Button variant="soft" onClick={() => askConfirm("updateAll")} loading={updatingAllBalances.value} data-testid="update-all-balances">
        {t("channels.action.updateAllBalances")}
      </Button>
      <Button variant="soft" color="red" onClick={() => askConfirm("deleteDisabled")} data-testid="delete-disabled">
        {t("channels.action.deleteDisabled")}
      </Button>
      <Button variant="soft" color="orange" onClick={() => askConfirm("fix")} data-testid="fix-channels">
        {t("channels.action.fix")}
      </Button>
      <Separator orientation="vertical" />
      <Text as="label" size="2">
        <Flex gap="2" align="center">
          <Switch checked={idSort.value} onCheckedChange={(v) => void setIdSort(v)} data-testid="id-sort" />
          {t("channels.action.idSort")}
        </Flex>
      </Text>
      <Text as="label" size="2">
        <Flex gap="2" align="center">
          <Switch checked={bulkDeleteMode.value} onCheckedChange={setBulkDeleteMode} data-testid="bulk-mode" />
          {t("channels.action.bulkMode")}
        </Flex>
      </Text>
      {bulkDeleteMode.value ? (
        <Button
          color="red"
          onClick={() => (selected === 0 ? toast.error(t("channels.msg.selectFirst")) : askConfirm("deleteSelected"))}
          data-testid="delete-selected"
        >
          {t("channels.action.deleteSelected")}
          {selected > 0 ? ` (${selected})` : ""}
        </Button>
      ) : null}
    </Flex>
  );
}
