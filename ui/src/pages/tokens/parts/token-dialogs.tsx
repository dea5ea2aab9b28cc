import { useSignals } from "@preact/signals-react/runtime";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../components/confirm-dialog";
import { removeToken } from "../../../stores/tokens";
import { deleteTarget } from "../dialogs";

/** TokenDialogs mounts the token page's confirmations in one place. */
export function TokenDialogs() {
  useSignals();
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const target = deleteTarget.value;
  return (
    <ConfirmDialog
      open={target !== null}
      onOpenChange={(open) => {
        if (!open) deleteTarget.value = null;
      }}
      title={t("tokens.confirm.delete")}
      description={target ? `${target.name} · ${t("tokens.confirm.irreversible")}` : undefined}
      destructive
      busy={busy}
      onConfirm={async () => {
        if (!target) return;
        setBusy(true);
        await removeToken(target.id);
        setBusy(false);
        // The confirmation of another token, opened since this one was dismissed, stays open.
        if (deleteTarget.peek() === target) deleteTarget.value = null;
      }}
    />
  );
}
