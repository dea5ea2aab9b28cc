import { useTranslation } from "react-i18next";
import { SpecSection } from "../option-form/spec-section";

/** QuotaSection sets the quota handed out on registration and invitation, the pre-charge and the reminder threshold. */
export function QuotaSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.quota.${k}`);
  return (
    <SpecSection
      id="quota"
      title={l("title")}
      saveLabel={l("save")}
      fields={[
        { key: "QuotaForNewUser", kind: "number", min: 0, integer: true, label: l("QuotaForNewUser") },
        { key: "PreConsumedQuota", kind: "number", min: 0, integer: true, label: l("PreConsumedQuota"), hint: l("PreConsumedQuotaHint") },
        { key: "QuotaForInviter", kind: "number", min: 0, integer: true, label: l("QuotaForInviter") },
        { key: "QuotaForInvitee", kind: "number", min: 0, integer: true, label: l("QuotaForInvitee") },
        { key: "QuotaRemindThreshold", kind: "number", min: 0, integer: true, label: l("QuotaRemindThreshold"), hint: l("QuotaRemindThresholdHint") },
      ]}
    />
  );
}
