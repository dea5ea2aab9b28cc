import { Button, Flex, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { MultiSelect } from "../../../components/multi-select";
import { Field } from "../../../components/ui/field";
import { Tooltip } from "../../../components/ui/tooltip";
import { toast } from "../../../stores/toast";
import { suggestedModels } from "../constants";
import { addCustomModels, type ChannelForm } from "../form";
import type { SetField } from "./type-fields";

/** ModelsFieldProps give the models field the form and the known model lists. */
export interface ModelsFieldProps {
  form: ChannelForm;
  set: SetField;
  byType: Record<string, string[]>;
  allModels: string[];
  fetching: boolean;
  onFetch: () => void;
}

/** ModelsField picks the channel's models: related, all, fetched from the provider (by the server), cleared, or typed in. */
export function ModelsField({ form, set, byType, allModels, fetching, onFetch }: ModelsFieldProps) {
  const { t } = useTranslation();
  const [customModel, setCustomModel] = useState("");
  const type = form.type;
  const modelOptions = Array.from(new Set([...allModels, ...suggestedModels(type, byType)]));
  const addCustom = () => {
    if (customModel.trim() === "") return;
    const next = addCustomModels(form.models, customModel);
    if (next === null) {
      toast.error(t("channels.msg.modelsExist"));
      return;
    }
    set("models", next);
    setCustomModel("");
  };
  // A type without suggested models (custom) has nothing to fill in: the list chosen stays.
  const fillRelated = () => {
    const related = suggestedModels(type, byType);
    if (related.length === 0) {
      toast.info(t("channels.msg.noRelatedModels"));
      return;
    }
    set("models", related);
  };
  return (
    <Field id="ch-models" label={t("channels.form.models")}>
      <MultiSelect
        id="ch-models"
        value={form.models}
        options={modelOptions}
        onChange={(v) => set("models", v)}
        placeholder={t("channels.form.modelsPlaceholder")}
        label={t("channels.form.models")}
        creatable
        testId="channel-models"
      />
      <Flex gap="2" wrap="wrap" mt="1">
        <Button type="button" size="1" variant="soft" onClick={fillRelated} data-testid="fill-related-models">
          {t("channels.form.fillRelated")}
        </Button>
        <Button type="button" size="1" variant="soft" color="gray" onClick={() => set("models", allModels)}>
          {t("channels.form.fillAll")}
        </Button>
        <Tooltip content={t("channels.form.fetchTip")}>
          <Button type="button" size="1" variant="soft" color="cyan" loading={fetching} onClick={onFetch} data-testid="fetch-models">
            {t("channels.form.fetchModels")}
          </Button>
        </Tooltip>
        <Button type="button" size="1" variant="soft" color="orange" onClick={() => set("models", [])} data-testid="clear-models">
          {t("channels.form.clearModels")}
        </Button>
      </Flex>
      <Flex gap="2" mt="1">
        <TextField.Root
          className="grow"
          value={customModel}
          placeholder={t("channels.form.customModel")}
          onChange={(e) => setCustomModel(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              addCustom();
            }
          }}
          aria-label={t("channels.form.customModel")}
          data-testid="custom-model-input"
        />
        <Button type="button" onClick={addCustom} data-testid="custom-model-add">
          {t("channels.form.customFill")}
        </Button>
      </Flex>
    </Field>
  );
}
