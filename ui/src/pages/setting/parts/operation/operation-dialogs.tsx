import { useSignals } from "@preact/signals-react/runtime";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../../components/confirm-dialog";
import { formatTimestamp } from "../../../../components/format";
import { clearLogs, resetModelRatios } from "../../../../stores/options";
import { clearLogsBefore, closeDialog, dialogProps } from "./dialogs";
import { ModelRowDialog } from "./model-row-dialog";

/** OperationDialogs mounts every dialog of the operation tab in one place. */
export function OperationDialogs() {
  useSignals();
  const { t } = useTranslation();
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<boolean>) => {
    setBusy(true);
    try {
      if (await action()) closeDialog();
    } finally {
      setBusy(false);
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
        busy={busy}
        onConfirm={() => void run(() => clearLogs(clearLogsBefore.value))}
      />
      <ConfirmDialog
        {...dialogProps("resetRatio")}
        title={t("options.ratio.reset")}
        description={t("options.ratio.resetConfirm")}
        confirmLabel={t("options.ratio.reset")}
        destructive
        busy={busy}
        onConfirm={() => void run(resetModelRatios)}
      />
      <ModelRowDialog {...dialogProps("modelRow")} />
    </>
  );
}
