import { Badge, Button, Flex, ScrollArea, Text, TextField } from "@radix-ui/themes";
import { useMemo, useState } from "react";
import { useTranslation } from "react-i18next";
import "./multi-select.css";
import { Checkbox } from "./ui/checkbox";
import { Popover } from "./ui/popover";

/** Option is one choice: a value and, optionally, a label shown instead. */
export interface Option {
  value: string;
  label?: string;
}

/** MultiSelectProps configure a list-valued picker. */
export interface MultiSelectProps {
  id?: string;
  value: string[];
  options: (string | Option)[];
  onChange: (next: string[]) => void;
  placeholder?: string;
  /** label names the picker's popover for a screen reader: the label of its field. */
  label?: string;
  disabled?: boolean;
  /** creatable lets the user add a value that is not among the options. */
  creatable?: boolean;
  testId?: string;
}

/** MAX_SHOWN bounds the options rendered at once; the search narrows the rest. */
const MAX_SHOWN = 300;

function normalise(options: (string | Option)[]): Option[] {
  return options.map((o) => (typeof o === "string" ? { value: o } : o));
}

/** MultiSelect shows the chosen values as removable chips and picks more from a searchable list. */
export function MultiSelect({ id, value, options, onChange, placeholder, label, disabled, creatable, testId }: MultiSelectProps) {
  const { t } = useTranslation();
  const [query, setQuery] = useState("");
  const all = useMemo(() => {
    const list = normalise(options);
    const known = new Set(list.map((o) => o.value));
    for (const v of value) if (!known.has(v)) list.push({ value: v });
    return list;
  }, [options, value]);
  const labelOf = (v: string) => all.find((o) => o.value === v)?.label ?? v;
  const q = query.trim().toLowerCase();
  const matches = q ? all.filter((o) => o.value.toLowerCase().includes(q) || (o.label ?? "").toLowerCase().includes(q)) : all;
  const chosen = new Set(value);
  const toggle = (v: string, on: boolean) => {
    if (on && !chosen.has(v)) onChange([...value, v]);
    if (!on) onChange(value.filter((x) => x !== v));
  };
  // Typed values are stored comma-joined (a channel's groups and models), so
  // "vip, svip" adds the two values it will be saved as, not one chip; the
  // add item names those values, and is not offered when none is new.
  const typed = query.split(/[,，]/).map((v) => v.trim()).filter((v) => v !== "");
  const adding = typed.filter((v, i) => !chosen.has(v) && typed.indexOf(v) === i);
  const canCreate = creatable && adding.length > 0 && !all.some((o) => o.value === query.trim());
  const create = () => {
    if (adding.length > 0) onChange([...value, ...adding]);
  };

  return (
    <div className={`multi-select ${disabled ? "disabled" : ""}`} data-testid={testId}>
      <Flex gap="1" wrap="wrap" align="center" className="multi-select-chips">
        <Popover.Root onOpenChange={(o) => !o && setQuery("")}>
          <Popover.Trigger disabled={disabled}>
            <Button id={id} type="button" size="1" variant="soft" disabled={disabled} data-testid={testId ? `${testId}-open` : undefined}>
              {t("picker.choose")}
            </Button>
          </Popover.Trigger>
          <Popover.Content width="340px" className="multi-select-popover" aria-label={label ?? t("picker.choose")}>
            <TextField.Root
              size="2"
              placeholder={t("picker.search")}
              aria-label={t("picker.search")}
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter") {
                  // Enter picks the exact match, the only match, or adds the new value.
                  e.preventDefault();
                  const exact = all.find((o) => o.value === query.trim());
                  const pick = exact ?? (matches.length === 1 ? matches[0] : undefined);
                  if (pick) {
                    toggle(pick.value, !chosen.has(pick.value));
                    setQuery("");
                  } else if (canCreate) {
                    create();
                    setQuery("");
                  }
                }
              }}
              autoFocus
              data-testid={testId ? `${testId}-search` : undefined}
            />
            <ScrollArea type="auto" scrollbars="vertical" style={{ maxHeight: 280 }} mt="2">
              <Flex direction="column" gap="1" pr="3">
                {canCreate ? (
                  <Button
                    type="button"
                    size="1"
                    variant="ghost"
                    className="multi-select-create"
                    onClick={() => {
                      create();
                      setQuery("");
                    }}
                  >
                    {adding.length === 1 ? t("picker.add", { value: adding[0] }) : t("picker.addMany", { count: adding.length, values: adding.join(t("picker.separator")) })}
                  </Button>
                ) : null}
                {matches.slice(0, MAX_SHOWN).map((o) => (
                  <Text as="label" size="2" key={o.value} className="multi-select-option">
                    <Flex gap="2" align="center">
                      <Checkbox checked={chosen.has(o.value)} onCheckedChange={(v) => toggle(o.value, v === true)} />
                      <span className="break-all">{o.label ?? o.value}</span>
                    </Flex>
                  </Text>
                ))}
                {matches.length > MAX_SHOWN ? (
                  <Text size="1" color="gray">
                    {t("picker.more", { count: matches.length - MAX_SHOWN })}
                  </Text>
                ) : null}
                {matches.length === 0 && !canCreate ? (
                  <Text size="2" color="gray">
                    {t("picker.noMatch")}
                  </Text>
                ) : null}
              </Flex>
            </ScrollArea>
            {value.length > 0 ? (
              <Flex justify="end" mt="2">
                <Button type="button" size="1" variant="ghost" color="red" onClick={() => onChange([])}>
                  {t("picker.clear")}
                </Button>
              </Flex>
            ) : null}
          </Popover.Content>
        </Popover.Root>
        {value.length === 0 ? (
          <Text size="2" color="gray">
            {placeholder ?? t("picker.none")}
          </Text>
        ) : (
          value.map((v) => (
            <Badge key={v} size="2" variant="soft" className="multi-select-chip" data-value={v}>
              {labelOf(v)}
              {!disabled ? (
                <button type="button" className="multi-select-remove" onClick={() => toggle(v, false)} aria-label={t("picker.remove", { value: v })}>
                  ×
                </button>
              ) : null}
            </Badge>
          ))
        )}
      </Flex>
    </div>
  );
}
