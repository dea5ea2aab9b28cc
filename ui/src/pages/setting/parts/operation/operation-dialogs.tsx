import { useSignals } from "@preact/signals-react/runtime";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../../components/confirm-dialog";
import { formatTimestamp } from "../../../../components/format";
import { clearLogs, resetModelRatios } from "../../../../stores/options";
import { clearLogsBefore, closeDialog, dialogProps, type OperationDialog } from "./dialogs";
import { ModelRowDialog } from "./model-row-dialog";

/** OperationDialogs mounts every dialog of the operation tab in one place. */
export function OperationDialogs() {
  useSignals();
  const { t } = useTranslation();
  // The dialog whose action is on its way: only its button shows it.
  const [busy, setBusy] = useState<OperationDialog | null>(null);
  const run = async (d: OperationDialog, action: () => Promise<boolean>) => {
    setBusy(d);
    try {
      if (await action()) closeDialog(d);
    } finally {
      // Another dialog's action started since stays busy until its own answer.
      setBusy((b) => (b === d ? null : b));
    }
  };
  const when = formatTimestamp(clearLogsBefore.value);
  return (
    <>
      <ConfirmDialog
        {...dialogProps("clearLogs")}
        title={t("options.log.confirmTitle")}
        description={t("options.log.confirmText", { date: when })}
        confirmLabel={t("options.log.clear")}
        destructive
        busy={busy === "clearLogs"}
        onConfirm={() => void run("clearLogs", () => clearLogs(clearLogsBefore.value))}
      />
      <ConfirmDialog
        {...dialogProps("resetRatio")}
        title={t("options.ratio.reset")}
        description={t("options.ratio.resetConfirm")}
        confirmLabel={t("options.ratio.reset")}
        destructive
        busy={busy === "resetRatio"}
        onConfirm={() => void run("resetRatio", resetModelRatios)}
      />
      <ModelRowDialog {...dialogProps("modelRow")} />
    </>
  );
}
