import { useSignals } from "@preact/signals-react/runtime";
import { Button, TextArea } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { closeManualCopy, manualCopy } from "../stores/clipboard";
import { Dialog } from "./ui/dialog";

/** CopyDialog shows text the browser would not copy, selected for manual copying. */
export function CopyDialog() {
  useSignals();
  const { t } = useTranslation();
  const text = manualCopy.value;
  return (
    <Dialog
      open={text !== null}
      onOpenChange={(open) => {
        if (!open) closeManualCopy();
      }}
      title={t("copy.manualTitle")}
      description={t("copy.manualHint")}
      footer={<Button onClick={closeManualCopy}>{t("common.close")}</Button>}
    >
      <TextArea readOnly value={text ?? ""} rows={4} aria-label={t("copy.manualText")} onFocus={(e) => e.currentTarget.select()} autoFocus data-testid="manual-copy-text" />
    </Dialog>
  );
}
