import { useSignals } from "@preact/signals-react/runtime";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../components/confirm-dialog";
import { useBusyFor } from "../../../lib/busy-for";
import { removeToken } from "../../../stores/tokens";
import { deleteTarget } from "../dialogs";

/** TokenDialogs mounts the token page's confirmations in one place. */
export function TokenDialogs() {
  useSignals();
  const { t } = useTranslation();
  const target = deleteTarget.value;
  const [isBusy, run] = useBusyFor<typeof target>();
  return (
    <ConfirmDialog
      open={target !== null}
      onOpenChange={(open) => {
        if (!open) deleteTarget.value = null;
      }}
      title={t("tokens.confirm.delete")}
      description={target ? `${target.name} · ${t("tokens.confirm.irreversible")}` : undefined}
      destructive
      busy={isBusy(target)}
      onConfirm={() => {
        if (!target) return;
        void run(target, async () => {
          await removeToken(target.id);
          // The confirmation of another token, opened since this one was dismissed, stays open.
          if (deleteTarget.peek() === target) deleteTarget.value = null;
        });
      }}
    />
  );
}
