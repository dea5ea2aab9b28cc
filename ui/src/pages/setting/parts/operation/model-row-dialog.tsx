import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Text, TextField } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { Dialog } from "../../../../components/ui/dialog";
import { Field } from "../../../../components/ui/field";
import { RadioGroup } from "../../../../components/ui/radio-group";
import { trimNumber } from "../../../../lib/quota";
import { quotaPerUnit } from "../../../../stores/status";
import { toast } from "../../../../stores/toast";
import { editingModel } from "./dialogs";
import { pricingRows, upsertModelRow, type ModelRow } from "./pricing";

type Mode = "ratio" | "price";
const EMPTY = { model: "", mode: "ratio" as Mode, price: "", ratio: "", completion: "" };

function formOf(row: ModelRow | undefined): typeof EMPTY {
  if (!row) return EMPTY;
  const s = (v: number | null) => (v === null ? "" : String(v));
  return { model: row.model, mode: row.price !== null ? "price" : "ratio", price: s(row.price), ratio: s(row.ratio), completion: s(row.completion) };
}

/** ModelRowDialog adds or edits one model of the price table: a fixed price per call, or a ratio and a completion ratio. */
export function ModelRowDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  useSignals();
  const { t } = useTranslation();
  const l = (k: string, o?: Record<string, unknown>) => t(`options.pricing.${k}`, o);
  const original = editingModel.value;
  const [form, setForm] = useState(EMPTY);
  useEffect(() => {
    if (open) setForm(formOf(original === null ? undefined : pricingRows.value.find((r) => r.model === original)));
  }, [open, original]);
  const set = (key: keyof typeof EMPTY) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [key]: e.target.value }));

  /** parse reads an optional non-negative number; undefined means invalid (and the user was told). */
  const parse = (text: string, name: string): number | null | undefined => {
    if (text.trim() === "") return null;
    const n = Number(text);
    if (!Number.isFinite(n) || n < 0) {
      toast.error(l("negative", { name }));
      return undefined;
    }
    return n;
  };

  const submit = () => {
    const model = form.model.trim();
    if (!model) {
      toast.error(l("modelRequired"));
      return;
    }
    let row: ModelRow;
    if (form.mode === "price") {
      const price = parse(form.price, l("price"));
      if (price === undefined) return;
      if (price === null) {
        toast.error(l("priceRequired"));
        return;
      }
      row = { model, price, ratio: null, completion: null };
    } else {
      const ratio = parse(form.ratio, l("ratio"));
      const completion = ratio === undefined ? undefined : parse(form.completion, l("completion"));
      if (ratio === undefined || completion === undefined) return;
      if (ratio === null && completion === null) {
        toast.error(l("needValue"));
        return;
      }
      if (ratio === null) {
        toast.error(l("ratioRequired"));
        return;
      }
      row = { model, price: null, ratio, completion };
    }
    if (!upsertModelRow(row, original)) {
      toast.error(l("modelExists"));
      return;
    }
    onOpenChange(false);
  };

  const ratio = Number(form.ratio);
  // An empty completion ratio means the model's built-in one, which the server knows.
  const builtInCompletion = form.completion.trim() === "";
  const completion = builtInCompletion ? 1 : Number(form.completion);
  const showPrices = form.mode === "ratio" && form.ratio.trim() !== "" && Number.isFinite(ratio) && Number.isFinite(completion);
  // Dollars per 1M tokens at ratio 1: 2 at the default 500 000 quota per dollar, as the pricing page shows.
  const perM = 1e6 / quotaPerUnit.value;
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title={original === null ? l("addTitle") : l("editTitle")}
      footer={
        <>
          <Button variant="soft" color="gray" onClick={() => onOpenChange(false)}>
            {t("common.cancel")}
          </Button>
          <Button onClick={submit} data-testid="model-row-save">
            {t("common.confirm")}
          </Button>
        </>
      }
    >
      <Flex direction="column" gap="3">
        <Field id="model-row-name" label={l("model")}>
          <TextField.Root id="model-row-name" value={form.model} onChange={set("model")} />
        </Field>
        <Field id="model-row-mode" label={l("mode")}>
          <RadioGroup.Root id="model-row-mode" aria-label={l("mode")} value={form.mode} onValueChange={(v) => setForm((f) => ({ ...f, mode: v as Mode }))}>
            <Flex gap="4">
              <RadioGroup.Item value="ratio" data-testid="model-row-mode-ratio">
                {l("byRatio")}
              </RadioGroup.Item>
              <RadioGroup.Item value="price" data-testid="model-row-mode-price">
                {l("byPrice")}
              </RadioGroup.Item>
            </Flex>
          </RadioGroup.Root>
        </Field>
        {form.mode === "price" ? (
          <Field id="model-row-price" label={l("price")}>
            <TextField.Root id="model-row-price" type="number" min={0} step="any" value={form.price} onChange={set("price")} />
          </Field>
        ) : (
          <>
            <Field id="model-row-ratio" label={l("ratio")}>
              <TextField.Root id="model-row-ratio" type="number" min={0} step="any" value={form.ratio} onChange={set("ratio")} />
            </Field>
            <Field id="model-row-completion" label={l("completion")}>
              <TextField.Root id="model-row-completion" type="number" min={0} step="any" value={form.completion} onChange={set("completion")} />
            </Field>
            {showPrices ? (
              <Text size="1" color="gray">
                {l("promptPrice", { price: trimNumber(perM * ratio) })} ·{" "}
                {builtInCompletion ? l("completionBuiltIn") : l("completionPrice", { price: trimNumber(perM * ratio * completion) })}
              </Text>
            ) : null}
          </>
        )}
      </Flex>
    </Dialog>
  );
}
