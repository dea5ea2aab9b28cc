import { useTranslation } from "react-i18next";
import { SpecSection } from "../option-form/spec-section";

/** SensitiveSection switches the sensitive-word checks and edits the word list (one per line). */
export function SensitiveSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.sensitive.${k}`);
  return (
    <SpecSection
      id="sensitive"
      title={l("title")}
      saveLabel={l("save")}
      fields={[
        { key: "CheckSensitiveEnabled", kind: "switch", label: l("CheckSensitiveEnabled") },
        { key: "CheckSensitiveOnPromptEnabled", kind: "switch", label: l("CheckSensitiveOnPromptEnabled") },
        { key: "SensitiveWords", kind: "textarea", rows: 6, label: l("SensitiveWords"), placeholder: l("SensitiveWordsHint"), hint: l("SensitiveWordsHint") },
      ]}
    />
  );
}
