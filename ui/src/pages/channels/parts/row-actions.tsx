import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, IconButton } from "@radix-ui/themes";
import { useRef } from "react";
import { useTranslation } from "react-i18next";
import type { Channel } from "../../../api/channels";
import { Icon } from "../../../components/icons";
import { DropdownMenu } from "../../../components/ui/dropdown-menu";
import { keepRowFocus } from "../../../lib/keep-focus";
import { CHANNEL_ENABLED, copyingIds, duplicateChannel, refreshBalance, setChannelStatus, splitList, statusChanging, testOne, testingIds } from "../../../stores/channels";
import { askConfirm, openEditor } from "../dialogs";

/** RowActions holds a channel's actions: test (default or chosen model), enable/disable, edit, and a menu with copy, balance and delete. */
export function RowActions({ channel }: { channel: Channel }) {
  useSignals();
  const { t } = useTranslation();
  const models = splitList(channel.models);
  const testing = testingIds.value.has(channel.id);
  // The test button and the model menu's button are disabled while a test runs: the keyboard comes back to them after.
  const testButton = useRef<HTMLButtonElement>(null);
  const changing = statusChanging.value.has(channel.id);
  return (
    <Flex gap="1" align="center" wrap="wrap">
      <Flex gap="0" align="center">
        <Button
          ref={testButton}
          size="1"
          variant="soft"
          loading={testing}
          onClick={(e) => void keepRowFocus(e.currentTarget, testOne(channel))}
          data-testid="test-channel"
          className="split-left"
        >
          {t("channels.row.test")}
        </Button>
        <DropdownMenu.Root>
          <DropdownMenu.Trigger disabled={testing || models.length === 0}>
            <IconButton size="1" variant="soft" aria-label={t("channels.row.testModel")} className="split-right" data-testid="test-model-menu">
              <Icon name="chevronRight" size={12} style={{ transform: "rotate(90deg)" }} />
            </IconButton>
          </DropdownMenu.Trigger>
          <DropdownMenu.Content className="menu-scroll">
            <DropdownMenu.Label>{t("channels.row.testModel")}</DropdownMenu.Label>
            {models.map((m) => (
              <DropdownMenu.Item key={m} onSelect={() => void keepRowFocus(testButton.current, testOne(channel, m))} data-model={m}>
                {m}
              </DropdownMenu.Item>
            ))}
          </DropdownMenu.Content>
        </DropdownMenu.Root>
      </Flex>
      {channel.status === CHANNEL_ENABLED ? (
        <Button size="1" variant="soft" color="orange" loading={changing} onClick={(e) => void keepRowFocus(e.currentTarget, setChannelStatus(channel.id, 2))} data-testid="disable-channel">
          {t("channels.row.disable")}
        </Button>
      ) : (
        <Button size="1" variant="soft" color="green" loading={changing} onClick={(e) => void keepRowFocus(e.currentTarget, setChannelStatus(channel.id, 1))} data-testid="enable-channel">
          {t("channels.row.enable")}
        </Button>
      )}
      <Button size="1" variant="soft" color="gray" onClick={() => openEditor(channel.id)} data-testid="edit-channel">
        {t("channels.row.edit")}
      </Button>
      <DropdownMenu.Root>
        <DropdownMenu.Trigger>
          <IconButton size="1" variant="ghost" color="gray" aria-label={t("channels.row.more")} data-testid="channel-menu">
            <span aria-hidden="true">⋯</span>
          </IconButton>
        </DropdownMenu.Trigger>
        <DropdownMenu.Content align="end">
          <DropdownMenu.Item disabled={copyingIds.value.has(channel.id)} onSelect={() => void duplicateChannel(channel.id)} data-testid="copy-channel">
            {t("channels.row.copy")}
          </DropdownMenu.Item>
          <DropdownMenu.Item onSelect={() => void refreshBalance(channel)}>{t("channels.row.updateBalance")}</DropdownMenu.Item>
          <DropdownMenu.Separator />
          <DropdownMenu.Item color="red" onSelect={() => askConfirm("delete", channel)} data-testid="delete-channel">
            {t("channels.row.delete")}
          </DropdownMenu.Item>
        </DropdownMenu.Content>
      </DropdownMenu.Root>
    </Flex>
  );
}
