import { useSignals } from "@preact/signals-react/runtime";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../../components/confirm-dialog";
import { saveOption } from "../../../../stores/options";
import { closeDialog, dialogProps } from "./dialogs";

/** SystemDialogs mounts every dialog of the system tab in one place. */
export function SystemDialogs() {
  useSignals();
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const disablePasswordLogin = async () => {
    setBusy(true);
    try {
      if (await saveOption("PasswordLoginEnabled", "false")) closeDialog();
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog
      {...dialogProps("disablePasswordLogin")}
      title={t("options.login.disablePasswordTitle")}
      description={t("options.login.disablePasswordText")}
      confirmLabel={t("options.login.disablePasswordConfirm")}
      destructive
      busy={busy}
      onConfirm={() => void disablePasswordLogin()}
    />
  );
}
