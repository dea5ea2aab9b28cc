import { useTranslation } from "react-i18next";
import { SpecSection } from "../option-form/spec-section";

/** GeneralSection edits links, the quota unit, retries and display rules. */
export function GeneralSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.general.${k}`);
  return (
    <SpecSection
      id="general"
      title={l("title")}
      saveLabel={l("save")}
      fields={[
        { key: "TopUpLink", kind: "text", label: l("TopUpLink"), hint: l("TopUpLinkHint") },
        { key: "ChatLink", kind: "text", label: l("ChatLink"), placeholder: l("linkPlaceholder") },
        { key: "ChatLink2", kind: "text", label: l("ChatLink2"), placeholder: l("linkPlaceholder") },
        { key: "QuotaPerUnit", kind: "number", min: 1, label: l("QuotaPerUnit"), hint: l("QuotaPerUnitHint") },
        { key: "RetryTimes", kind: "number", min: 0, integer: true, label: l("RetryTimes") },
        { key: "DisplayInCurrencyEnabled", kind: "switch", label: l("DisplayInCurrencyEnabled") },
        { key: "DisplayTokenStatEnabled", kind: "switch", label: l("DisplayTokenStatEnabled") },
        { key: "DefaultCollapseSidebar", kind: "switch", label: l("DefaultCollapseSidebar") },
      ]}
    />
  );
}
