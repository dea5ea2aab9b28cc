import { useTranslation } from "react-i18next";
import { SpecSection } from "../option-form/spec-section";

/** DashboardSection configures the data dashboard: on/off, update interval and default granularity. */
export function DashboardSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.dashboard.${k}`);
  return (
    <SpecSection
      id="dashboard"
      title={l("title")}
      saveLabel={l("save")}
      fields={[
        { key: "DataExportEnabled", kind: "switch", label: l("DataExportEnabled") },
        { key: "DataExportInterval", kind: "number", min: 1, integer: true, label: l("DataExportInterval"), hint: l("DataExportIntervalHint") },
        {
          key: "DataExportDefaultTime",
          kind: "select",
          label: l("DataExportDefaultTime"),
          hint: l("DataExportDefaultTimeHint"),
          items: ["hour", "day", "week"].map((value) => ({ value, label: l(value) })),
        },
      ]}
    />
  );
}
