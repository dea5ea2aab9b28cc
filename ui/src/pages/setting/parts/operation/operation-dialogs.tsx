import { useSignals } from "@preact/signals-react/runtime";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../../components/confirm-dialog";
import { formatTimestamp } from "../../../../components/format";
import { useBusyFor } from "../../../../lib/busy-for";
import { clearLogs, resetModelRatios } from "../../../../stores/options";
import { clearLogsBefore, closeDialog, dialogProps, type OperationDialog } from "./dialogs";
import { ModelRowDialog } from "./model-row-dialog";

/** OperationDialogs mounts every dialog of the operation tab in one place. */
export function OperationDialogs() {
  useSignals();
  const { t } = useTranslation();
  // The dialog whose action is on its way: only its button shows it.
  const [isBusy, runFor] = useBusyFor<OperationDialog>();
  const run = (d: OperationDialog, action: () => Promise<boolean>) =>
    runFor(d, async () => {
      if (await action()) closeDialog(d);
    });
  const when = formatTimestamp(clearLogsBefore.value);
  return (
    <>
      <ConfirmDialog
        {...dialogProps("clearLogs")}
        title={t("options.log.confirmTitle")}
        description={t("options.log.confirmText", { date: when })}
        confirmLabel={t("options.log.clear")}
        destructive
        busy={isBusy("clearLogs")}
        onConfirm={() => void run("clearLogs", () => clearLogs(clearLogsBefore.value))}
      />
      <ConfirmDialog
        {...dialogProps("resetRatio")}
        title={t("options.ratio.reset")}
        description={t("options.ratio.resetConfirm")}
        confirmLabel={t("options.ratio.reset")}
        destructive
        busy={isBusy("resetRatio")}
        onConfirm={() => void run("resetRatio", resetModelRatios)}
      />
      <ModelRowDialog {...dialogProps("modelRow")} />
    </>
  );
}
