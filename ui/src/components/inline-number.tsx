import { TextField } from "@radix-ui/themes";
import { useEffect, useRef, useState } from "react";
import { t } from "../i18n";
import { toast } from "../stores/toast";

/** InlineNumberProps configure an integer edited in place. */
export interface InlineNumberProps {
  value: number;
  /** min raises lower entries to this value before saving. */
  min?: number;
  /** onCommit saves a changed value; resolving false puts the old value back. */
  onCommit: (value: number) => Promise<boolean>;
  label: string;
  width?: string;
  testId?: string;
}

/** InlineNumber edits an integer in a table cell and saves it on Enter (keeping the focus) or when it loses focus. */
export function InlineNumber({ value, min, onCommit, label, width = "84px", testId }: InlineNumberProps) {
  const [text, setText] = useState(String(value));
  const [busy, setBusy] = useState(false);
  // Saving: Enter then leaving the field saves once.
  const saving = useRef(false);
  useEffect(() => setText(String(value)), [value]);
  const commit = async () => {
    if (saving.current) return;
    const trimmed = text.trim();
    if (trimmed === "" || !/^-?\d+$/.test(trimmed)) {
      // Emptied means never mind; anything else is said to be wrong.
      if (trimmed !== "") toast.error(t("common.integerRequired", { label }));
      setText(String(value));
      return;
    }
    let n = Number.parseInt(trimmed, 10);
    if (min !== undefined && n < min) n = min;
    if (n === value) {
      setText(String(value));
      return;
    }
    setText(String(n));
    saving.current = true;
    setBusy(true);
    const ok = await onCommit(n);
    saving.current = false;
    setBusy(false);
    if (!ok) setText(String(value));
  };
  return (
    <TextField.Root
      size="1"
      type="number"
      inputMode="numeric"
      min={min}
      style={{ width }}
      value={text}
      // Read-only rather than disabled while saving: a disabled field would drop the keyboard.
      readOnly={busy}
      aria-label={label}
      data-testid={testId}
      onChange={(e) => setText(e.target.value)}
      onBlur={() => void commit()}
      onKeyDown={(e) => {
        // Enter saves and Escape puts the value back; the keyboard stays on the field.
        if (e.key === "Enter") void commit();
        if (e.key === "Escape") setText(String(value));
      }}
    />
  );
}
