import type { ReactNode } from "react";
import type { OptionChange } from "../../../../stores/options";
import { NumberOption, SecretOption, SelectOption, SwitchOption, TextAreaOption, TextOption } from "./option-fields";
import { FieldGrid, OptionSection } from "./option-section";
import { useOptionDraft, type OptionDraft } from "./use-option-draft";
import { checkChanges, prettyJson, stripTrailingSlashes, type JsonShape, type Rule } from "./validate";

interface BaseSpec {
  key: string;
  label: string;
  hint?: ReactNode;
}

/** FieldSpec describes one option field of a section. */
export type FieldSpec =
  | (BaseSpec & { kind: "text"; placeholder?: string; trimSlash?: boolean })
  | (BaseSpec & { kind: "secret" })
  | (BaseSpec & { kind: "number"; min: number; integer?: boolean; placeholder?: string })
  | (BaseSpec & { kind: "textarea"; rows?: number; json?: JsonShape; placeholder?: string; checkInput?: boolean })
  | (BaseSpec & { kind: "switch" })
  | (BaseSpec & { kind: "select"; items: { value: string; label: ReactNode }[] });

/** SpecSectionProps configure a section built from field specs. */
export interface SpecSectionProps {
  id: string;
  title: ReactNode;
  description?: ReactNode;
  saveLabel: ReactNode;
  fields: FieldSpec[];
  /** validate runs before the field rules, even with nothing changed; return false to stop the save (after telling the user why). */
  validate?: (changes: OptionChange[], draft: OptionDraft) => boolean;
  /** onSet reacts to a field change, for example to switch a dependent field. */
  onSet?: (key: string, value: string, draft: OptionDraft) => void;
  /** extra renders more content under the fields. */
  extra?: (draft: OptionDraft) => ReactNode;
  /** actions renders buttons beside the save button. */
  actions?: (draft: OptionDraft) => ReactNode;
  className?: string;
}

const SHORT = new Set(["text", "secret", "number", "select"]);

function rulesOf(fields: FieldSpec[]): Record<string, Rule> {
  const rules: Record<string, Rule> = {};
  for (const f of fields) {
    if (f.kind === "number") rules[f.key] = { min: f.min, integer: f.integer, label: f.label };
    if (f.kind === "textarea" && f.json) rules[f.key] = { json: f.json, label: f.label, checkInput: f.checkInput };
  }
  return rules;
}

function renderField(f: FieldSpec, draft: OptionDraft): ReactNode {
  const common = { draft, k: f.key, label: f.label, hint: f.hint };
  switch (f.kind) {
    case "text":
      return <TextOption key={f.key} {...common} placeholder={f.placeholder} />;
    case "secret":
      return <SecretOption key={f.key} {...common} />;
    case "number":
      return <NumberOption key={f.key} {...common} min={f.min} step={f.integer ? 1 : "any"} placeholder={f.placeholder} />;
    case "textarea":
      return <TextAreaOption key={f.key} {...common} rows={f.rows} mono={f.json !== undefined} placeholder={f.placeholder} />;
    case "switch":
      return <SwitchOption key={f.key} {...common} />;
    case "select":
      return <SelectOption key={f.key} {...common} items={f.items} />;
  }
}

/** layout renders the fields in order, putting runs of short fields side by side. */
function layout(fields: FieldSpec[], draft: OptionDraft): ReactNode[] {
  const out: ReactNode[] = [];
  let run: FieldSpec[] = [];
  const flush = () => {
    if (run.length > 0) out.push(<FieldGrid key={`grid-${run[0].key}`}>{run.map((f) => renderField(f, draft))}</FieldGrid>);
    run = [];
  };
  for (const f of fields) {
    if (SHORT.has(f.kind)) {
      run.push(f);
      continue;
    }
    flush();
    out.push(renderField(f, draft));
  }
  flush();
  return out;
}

/**
 * SpecSection is an option card built from field specs: it keeps the draft,
 * checks numbers and JSON, and saves only the keys that changed.
 */
export function SpecSection({ id, title, description, saveLabel, fields, validate, onSet, extra, actions, className }: SpecSectionProps) {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const raw = useOptionDraft(
    fields.map((f) => f.key),
    {
      display: (k, v) => {
        const f = byKey.get(k);
        return f?.kind === "textarea" && f.json ? prettyJson(v) : v;
      },
      normalize: (k, v) => {
        const f = byKey.get(k);
        return f?.kind === "text" && f.trimSlash ? stripTrailingSlashes(v) : v;
      },
    },
  );
  const draft: OptionDraft = onSet
    ? {
        ...raw,
        set: (k, v) => {
          raw.set(k, v);
          onSet(k, v, raw);
        },
      }
    : raw;
  const save = async () => {
    const changes = draft.changes();
    if (validate && !validate(changes, draft)) return;
    if (!checkChanges(changes, rulesOf(fields))) return;
    await draft.save(changes);
  };
  return (
    <OptionSection
      id={id}
      title={title}
      description={description}
      onSave={() => void save()}
      saveLabel={saveLabel}
      saving={draft.saving}
      actions={actions?.(draft)}
      className={className}
    >
      {layout(fields, draft)}
      {extra?.(draft)}
    </OptionSection>
  );
}
