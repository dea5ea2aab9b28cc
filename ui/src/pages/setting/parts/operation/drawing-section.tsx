import { useTranslation } from "react-i18next";
import { SpecSection } from "../option-form/spec-section";

const KEYS = ["DrawingEnabled", "MjNotifyEnabled", "MjAccountFilterEnabled", "MjForwardUrlEnabled", "MjModeClearEnabled", "MjActionCheckSuccessEnabled"];

/** DrawingSection switches drawing and the Midjourney relay behaviours. */
export function DrawingSection() {
  const { t } = useTranslation();
  return (
    <SpecSection
      id="drawing"
      title={t("options.drawing.title")}
      saveLabel={t("options.drawing.save")}
      fields={KEYS.map((key) => ({ key, kind: "switch" as const, label: t(`options.drawing.${key}`) }))}
    />
  );
}
