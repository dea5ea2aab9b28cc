import { useSignals } from "@preact/signals-react/runtime";
import { Callout } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../components/confirm-dialog";
import { useBusyFor } from "../../../lib/busy-for";
import { deleteDisabled, deleteSelected, fixAbilities, removeChannel, selectedChannels, startTestAll, updateAllBalances } from "../../../stores/channels";
import { closeConfirm, confirmState, type ChannelConfirm } from "../dialogs";

interface ConfirmText {
  title: string;
  description?: string;
  warning?: string;
  destructive?: boolean;
}

/** ChannelDialogs mounts every confirmation of the channel page in one place. */
export function ChannelDialogs() {
  useSignals();
  const { t } = useTranslation();
  const state = confirmState.value;
  const [isBusy, runFor] = useBusyFor<typeof state>();
  const texts: Record<ChannelConfirm, ConfirmText> = {
    delete: { title: t("channels.confirm.delete"), description: t("channels.confirm.irreversible"), destructive: true },
    testAll: { title: t("channels.confirm.testAll"), description: t("channels.confirm.testAllHint") },
    updateAll: { title: t("channels.confirm.updateAll"), description: t("channels.confirm.updateAllHint") },
    deleteDisabled: { title: t("channels.confirm.deleteDisabled"), description: t("channels.confirm.irreversible"), destructive: true },
    deleteSelected: {
      title: t("channels.confirm.deleteSelected", { count: selectedChannels.value.size }),
      description: t("channels.confirm.irreversible"),
      destructive: true,
    },
    fix: { title: t("channels.confirm.fix"), warning: t("channels.confirm.fixWarning"), destructive: true },
  };
  const text = state ? texts[state.kind] : null;

  const run = async () => {
    if (!state) return;
    const { kind, channel } = state;
    // Long actions close the dialog at once and show their progress on the page.
    if (kind === "testAll") {
      closeConfirm();
      await startTestAll();
      return;
    }
    if (kind === "updateAll") {
      closeConfirm();
      await updateAllBalances();
      return;
    }
    await runFor(state, async () => {
      try {
        if (kind === "delete" && channel) await removeChannel(channel.id);
        if (kind === "deleteDisabled") await deleteDisabled();
        if (kind === "deleteSelected") await deleteSelected();
        if (kind === "fix") await fixAbilities();
      } finally {
        // Another confirmation, opened since this one was dismissed, stays open.
        if (confirmState.peek() === state) closeConfirm();
      }
    });
  };

  return (
    <ConfirmDialog
      open={state !== null}
      onOpenChange={(open) => {
        if (!open) closeConfirm();
      }}
      title={text?.title ?? ""}
      description={text?.description}
      destructive={text?.destructive}
      busy={isBusy(state)}
      onConfirm={() => void run()}
    >
      {text?.warning ? (
        <Callout.Root color="orange" mt="3">
          <Callout.Text>{text.warning}</Callout.Text>
        </Callout.Root>
      ) : null}
    </ConfirmDialog>
  );
}
