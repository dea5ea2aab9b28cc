import { Button, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Field } from "../../../../components/ui/field";
import { toast } from "../../../../stores/toast";
import { SpecSection } from "../option-form/spec-section";
import { askClearLogs } from "./dialogs";

/** LogSection switches consumption logging and clears logs older than a chosen time (after a confirmation). */
export function LogSection() {
  const { t } = useTranslation();
  const [date, setDate] = useState("");
  const clear = () => {
    const ms = date ? new Date(date).getTime() : NaN;
    if (!Number.isFinite(ms) || ms <= 0) {
      toast.error(t("options.log.dateRequired"));
      return;
    }
    askClearLogs(Math.floor(ms / 1000));
  };
  return (
    <SpecSection
      id="log"
      title={t("options.log.title")}
      saveLabel={t("options.log.save")}
      fields={[{ key: "LogConsumeEnabled", kind: "switch", label: t("options.log.LogConsumeEnabled") }]}
      extra={() => (
        <Field id="log-clear-date" label={t("options.log.date")} hint={t("options.log.dateHint")}>
          <TextField.Root id="log-clear-date" type="datetime-local" value={date} onChange={(e) => setDate(e.target.value)} />
        </Field>
      )}
      actions={() => (
        <Button color="red" variant="soft" onClick={clear} data-testid="clear-logs">
          {t("options.log.clear")}
        </Button>
      )}
    />
  );
}
