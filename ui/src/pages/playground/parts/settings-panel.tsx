import { useSignals } from "@preact/signals-react/runtime";
import { Card, Flex, Heading, TextArea, TextField } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { Field } from "../../../components/ui/field";
import { Select } from "../../../components/ui/select";
import { Slider } from "../../../components/ui/slider";
import { chooseGroup, groupOptions, models, noModels, settings, TEMPERATURE_MAX, TEMPERATURE_MIN, TEMPERATURE_STEP, updateSettings } from "../../../stores/playground";

/**
 * SettingsPanel holds group, model, temperature, max tokens and the system
 * prompt. The temperature starts at 0, below the slider's range: the slider
 * then rests at its minimum while the label shows the value really sent.
 */
export function SettingsPanel() {
  useSignals();
  const { t } = useTranslation();
  const s = settings.value;
  const groups = groupOptions.value.length > 0 ? groupOptions.value : [{ value: "", label: t("playground.noGroups") }];
  const modelList = models.value.includes(s.model) || !s.model ? models.value : [s.model, ...models.value];
  const shownTemperature = Math.min(TEMPERATURE_MAX, Math.max(TEMPERATURE_MIN, s.temperature));
  return (
    <Card size="2">
      <Flex direction="column" gap="3">
        <Heading size="3">{t("playground.settings")}</Heading>
        <Field id="pg-group" label={t("playground.group")}>
          <Select.Root value={s.group || "\u0000own"} onValueChange={(v) => void chooseGroup(v === "\u0000own" ? "" : v)}>
            <Select.Trigger id="pg-group" data-testid="pg-group" />
            <Select.Content>
              {groups.map((g) => (
                <Select.Item key={g.value || "\u0000own"} value={g.value || "\u0000own"}>
                  {g.label === g.value ? g.value : `${g.value} · ${g.label}`}
                </Select.Item>
              ))}
            </Select.Content>
          </Select.Root>
        </Field>
        <Field id="pg-model" label={t("playground.model")} hint={noModels.value ? <span data-testid="pg-no-models">{t("playground.noModels")}</span> : undefined}>
          <Select.Root value={s.model} disabled={noModels.value} onValueChange={(v) => updateSettings({ model: v })}>
            <Select.Trigger id="pg-model" placeholder={t("playground.modelPlaceholder")} data-testid="pg-model" />
            <Select.Content>
              {modelList.map((m) => (
                <Select.Item key={m} value={m}>
                  {m}
                </Select.Item>
              ))}
            </Select.Content>
          </Select.Root>
        </Field>
        <Field id="pg-temperature" label={`${t("playground.temperature")}: ${s.temperature}`} hint={t("playground.temperatureHint")}>
          <Slider
            id="pg-temperature"
            min={TEMPERATURE_MIN}
            max={TEMPERATURE_MAX}
            step={TEMPERATURE_STEP}
            value={[shownTemperature]}
            onValueChange={([v]) => updateSettings({ temperature: Math.round(v * 10) / 10 })}
            aria-label={t("playground.temperature")}
            data-testid="pg-temperature"
          />
        </Field>
        <Field id="pg-max-tokens" label={t("playground.maxTokens")} hint={t("playground.maxTokensHint")}>
          <TextField.Root
            id="pg-max-tokens"
            type="number"
            min={0}
            step={1}
            value={String(s.maxTokens)}
            onChange={(e) => {
              const n = Number.parseInt(e.target.value, 10);
              updateSettings({ maxTokens: Number.isFinite(n) && n > 0 ? n : 0 });
            }}
            data-testid="pg-max-tokens"
          />
        </Field>
        <Field id="pg-system" label={t("playground.systemPrompt")}>
          <TextArea id="pg-system" rows={5} value={s.systemPrompt} onChange={(e) => updateSettings({ systemPrompt: e.target.value })} data-testid="pg-system" />
        </Field>
      </Flex>
    </Card>
  );
}
