import { useSignals } from "@preact/signals-react/runtime";
import { useEffect, useRef, useState } from "react";
import { SECRET_OPTION_KEYS } from "../../../../api/options";
import { options, saveOptions, type OptionChange } from "../../../../stores/options";

/** Draft maps option keys to the text their fields show. */
export type Draft = Record<string, string>;

/** DraftConfig tunes how server values become field text and field text becomes what is sent. */
export interface DraftConfig {
  /** display turns a server value into field text (pretty JSON, for example). */
  display?: (key: string, value: string) => string;
  /** normalize turns field text into the value sent (trailing slashes stripped, for example). */
  normalize?: (key: string, value: string) => string;
}

/** OptionDraft is the editable copy of one section's options. */
export interface OptionDraft {
  values: Draft;
  set: (key: string, value: string) => void;
  /** changes lists the keys whose sent value would differ from the server's; a secret counts only when filled. */
  changes: () => OptionChange[];
  /** save stores the changes and puts the saved fields back in step with the server; true when all were saved. */
  save: (changes: OptionChange[]) => Promise<boolean>;
  saving: boolean;
}

const identity = (_key: string, value: string) => value;

/**
 * useOptionDraft keeps a section's fields as a draft over the options store.
 * A field the user has not touched follows the server when the options reload
 * (after another section saved, for example); a touched field keeps its text.
 */
export function useOptionDraft(keys: readonly string[], config: DraftConfig = {}): OptionDraft {
  useSignals();
  const display = config.display ?? identity;
  const normalize = config.normalize ?? identity;
  const server = options.value;
  const view = (): Draft => Object.fromEntries(keys.map((k) => [k, SECRET_OPTION_KEYS.includes(k) ? "" : display(k, server[k] ?? "")]));
  const [values, setValues] = useState<Draft>(view);
  const [saving, setSaving] = useState(false);
  const base = useRef<Draft>(values);
  useEffect(() => {
    const prev = base.current;
    const next = view();
    base.current = next;
    setValues((d) => {
      const out = { ...d };
      for (const k of keys) if (d[k] === prev[k]) out[k] = next[k];
      return out;
    });
    // view depends only on server and on keys, which a section never changes.
  }, [server]);

  const changes = (): OptionChange[] => {
    const out: OptionChange[] = [];
    for (const k of keys) {
      const sent = normalize(k, values[k] ?? "");
      if (SECRET_OPTION_KEYS.includes(k)) {
        if (sent.trim() !== "") out.push([k, sent]);
      } else if (sent !== normalize(k, base.current[k] ?? "")) {
        out.push([k, sent]);
      }
    }
    return out;
  };

  const save = async (list: OptionChange[]): Promise<boolean> => {
    setSaving(true);
    try {
      const saved = await saveOptions(list);
      // The store reloaded the options: show the server's (normalised) value of every saved field.
      const fresh = options.value;
      const shown: Draft = Object.fromEntries(saved.map((k) => [k, SECRET_OPTION_KEYS.includes(k) ? "" : display(k, fresh[k] ?? "")]));
      base.current = { ...base.current, ...shown };
      setValues((d) => ({ ...d, ...shown }));
      return list.length > 0 && saved.length === list.length;
    } finally {
      setSaving(false);
    }
  };

  return { values, set: (key, value) => setValues((d) => ({ ...d, [key]: value })), changes, save, saving };
}
