import { Button } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { SpecSection } from "../option-form/spec-section";
import { showDialog } from "./dialogs";

/** RatioSection edits the pricing maps and groups as JSON, and resets the model ratios (after a confirmation). */
export function RatioSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.ratio.${k}`);
  return (
    <SpecSection
      id="ratio"
      className="span-2"
      title={l("title")}
      saveLabel={l("save")}
      fields={[
        { key: "ModelPrice", kind: "textarea", json: "ratioMap", checkInput: true, rows: 8, label: l("ModelPrice"), hint: l("ModelPriceHint") },
        { key: "ModelRatio", kind: "textarea", json: "ratioMap", checkInput: true, rows: 8, label: l("ModelRatio"), hint: l("jsonHint") },
        { key: "CompletionRatio", kind: "textarea", json: "ratioMap", checkInput: true, rows: 6, label: l("CompletionRatio"), hint: l("CompletionRatioHint") },
        { key: "GroupRatio", kind: "textarea", json: "ratioMap", checkInput: true, rows: 5, label: l("GroupRatio"), hint: l("jsonHint") },
        { key: "UserUsableGroups", kind: "textarea", json: "labelMap", checkInput: true, rows: 5, label: l("UserUsableGroups"), hint: l("jsonHint") },
      ]}
      actions={() => (
        <Button color="red" variant="soft" onClick={() => showDialog("resetRatio")} data-testid="reset-model-ratio">
          {l("reset")}
        </Button>
      )}
    />
  );
}
