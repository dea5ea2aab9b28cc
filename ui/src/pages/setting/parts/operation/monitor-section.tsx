import { useTranslation } from "react-i18next";
import { SpecSection } from "../option-form/spec-section";

/** MonitorSection sets the channel response-time limit, scheduled tests and balance updates, and automatic disable/enable. */
export function MonitorSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.monitor.${k}`);
  return (
    <SpecSection
      id="monitor"
      title={l("title")}
      saveLabel={l("save")}
      fields={[
        { key: "ChannelDisableThreshold", kind: "number", min: 0, label: l("ChannelDisableThreshold"), hint: l("ChannelDisableThresholdHint") },
        { key: "ChannelTestInterval", kind: "number", min: 0, integer: true, label: l("ChannelTestInterval"), hint: l("ChannelTestIntervalHint") },
        { key: "ChannelBalanceInterval", kind: "number", min: 0, integer: true, label: l("ChannelBalanceInterval"), hint: l("ChannelBalanceIntervalHint") },
        { key: "AutomaticDisableChannelEnabled", kind: "switch", label: l("AutomaticDisableChannelEnabled") },
        { key: "AutomaticEnableChannelEnabled", kind: "switch", label: l("AutomaticEnableChannelEnabled") },
      ]}
    />
  );
}
