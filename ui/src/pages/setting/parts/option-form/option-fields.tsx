import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Text, TextArea, TextField } from "@radix-ui/themes";
import { useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../../components/confirm-dialog";
import { Field } from "../../../../components/ui/field";
import { Select } from "../../../../components/ui/select";
import { Switch } from "../../../../components/ui/switch";
import { options, saveOption } from "../../../../stores/options";
import type { OptionDraft } from "./use-option-draft";

/** optionFieldId is the element id of an option's control. */
export function optionFieldId(key: string): string {
  return `opt-${key}`;
}

interface DraftFieldProps {
  draft: OptionDraft;
  /** k is the option key. */
  k: string;
  label: ReactNode;
  hint?: ReactNode;
  placeholder?: string;
}

/** TextOption edits a one-line option. */
export function TextOption({ draft, k, label, hint, placeholder }: DraftFieldProps) {
  const id = optionFieldId(k);
  return (
    <Field id={id} label={label} hint={hint}>
      <TextField.Root id={id} value={draft.values[k] ?? ""} placeholder={placeholder} onChange={(e) => draft.set(k, e.target.value)} />
    </Field>
  );
}

/**
 * SecretOption edits a secret: it starts empty and is sent only when filled. The stored value is
 * never shown, so clearing it (to turn a sign-in or a mail account off for good) is a button of its
 * own, confirmed; the server refuses it while an enabled option needs the secret.
 */
export function SecretOption({ draft, k, label, hint }: Omit<DraftFieldProps, "placeholder">) {
  const { t } = useTranslation();
  const id = optionFieldId(k);
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  return (
    <Field id={id} label={label} hint={hint}>
      <Flex gap="2" align="center">
        <TextField.Root
          id={id}
          className="full-width"
          type="password"
          autoComplete="new-password"
          value={draft.values[k] ?? ""}
          placeholder={t("options.secretPlaceholder")}
          onChange={(e) => draft.set(k, e.target.value)}
        />
        <Button type="button" variant="soft" color="gray" onClick={() => setAsking(true)} data-testid={`clear-secret-${k}`}>
          {t("options.secretClear")}
        </Button>
      </Flex>
      <ConfirmDialog
        open={asking}
        onOpenChange={setAsking}
        title={t("options.secretClearTitle")}
        description={t("options.secretClearHint", { name: typeof label === "string" ? label : k })}
        confirmLabel={t("options.secretClear")}
        destructive
        busy={busy}
        onConfirm={async () => {
          setBusy(true);
          try {
            if (await saveOption(k, "")) {
              draft.set(k, "");
              setAsking(false);
            }
          } finally {
            setBusy(false);
          }
        }}
      />
    </Field>
  );
}

/** NumberOption edits a numeric option; the section checks the minimum before saving. */
export function NumberOption({ draft, k, label, hint, placeholder, min, step }: DraftFieldProps & { min?: number; step?: number | "any" }) {
  const id = optionFieldId(k);
  return (
    <Field id={id} label={label} hint={hint}>
      <TextField.Root
        id={id}
        type="number"
        min={min}
        step={step ?? 1}
        value={draft.values[k] ?? ""}
        placeholder={placeholder}
        onChange={(e) => draft.set(k, e.target.value)}
      />
    </Field>
  );
}

/** TextAreaOption edits a multi-line option (JSON, word lists, site text). */
export function TextAreaOption({ draft, k, label, hint, placeholder, rows = 6, mono }: DraftFieldProps & { rows?: number; mono?: boolean }) {
  const id = optionFieldId(k);
  return (
    <Field id={id} label={label} hint={hint}>
      <TextArea
        id={id}
        rows={rows}
        resize="vertical"
        className={mono ? "option-mono" : undefined}
        spellCheck={!mono}
        value={draft.values[k] ?? ""}
        placeholder={placeholder}
        onChange={(e) => draft.set(k, e.target.value)}
      />
    </Field>
  );
}

/** SelectOption picks one of a few values. */
export function SelectOption({ draft, k, label, hint, items }: Omit<DraftFieldProps, "placeholder"> & { items: { value: string; label: ReactNode }[] }) {
  const id = optionFieldId(k);
  return (
    <Field id={id} label={label} hint={hint}>
      <Select.Root value={draft.values[k] || undefined} onValueChange={(v) => draft.set(k, v)}>
        <Select.Trigger id={id} />
        <Select.Content>
          {items.map((item) => (
            <Select.Item key={item.value} value={item.value}>
              {item.label}
            </Select.Item>
          ))}
        </Select.Content>
      </Select.Root>
    </Field>
  );
}

interface SwitchRowProps {
  id: string;
  checked: boolean;
  disabled?: boolean;
  onCheckedChange: (checked: boolean) => void;
  label: ReactNode;
  hint?: ReactNode;
}

/** SwitchRow is a switch with its label beside it. */
export function SwitchRow({ id, checked, disabled, onCheckedChange, label, hint }: SwitchRowProps) {
  return (
    <Flex direction="column" gap="1">
      <Text as="label" size="2">
        <Flex gap="2" align="center">
          <Switch id={id} checked={checked} disabled={disabled} onCheckedChange={onCheckedChange} />
          {label}
        </Flex>
      </Text>
      {hint ? (
        <Text size="1" color="gray">
          {hint}
        </Text>
      ) : null}
    </Flex>
  );
}

/** SwitchOption is a boolean option kept in the draft and saved with its section. */
export function SwitchOption({ draft, k, label, hint }: Omit<DraftFieldProps, "placeholder">) {
  return (
    <SwitchRow id={optionFieldId(k)} checked={draft.values[k] === "true"} onCheckedChange={(v) => draft.set(k, String(v))} label={label} hint={hint} />
  );
}

/** LiveSwitchProps configure a switch that saves on change. */
export interface LiveSwitchProps {
  k: string;
  label: ReactNode;
  hint?: ReactNode;
  /** onTurnOff, when given, is called instead of saving when the switch is turned off (to ask first). */
  onTurnOff?: () => void;
}

/** LiveSwitch saves its option as soon as it is flipped; a refusal leaves it showing the server's value. */
export function LiveSwitch({ k, label, hint, onTurnOff }: LiveSwitchProps) {
  useSignals();
  const [pending, setPending] = useState<boolean | null>(null);
  const checked = pending ?? options.value[k] === "true";
  const change = async (next: boolean) => {
    if (!next && onTurnOff) {
      onTurnOff();
      return;
    }
    setPending(next);
    try {
      await saveOption(k, String(next));
    } finally {
      setPending(null);
    }
  };
  return <SwitchRow id={optionFieldId(k)} checked={checked} disabled={pending !== null} onCheckedChange={(v) => void change(v)} label={label} hint={hint} />;
}
