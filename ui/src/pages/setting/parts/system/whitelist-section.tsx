import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Button, Flex, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Field } from "../../../../components/ui/field";
import { options, saveOptions } from "../../../../stores/options";
import { toast } from "../../../../stores/toast";
import { LiveSwitch } from "../option-form/option-fields";
import { OptionSection } from "../option-form/option-section";

const KEY = "EmailDomainWhitelist";

/** splitDomains reads the comma list as trimmed, non-empty domains. */
export function splitDomains(list: string): string[] {
  return list
    .split(",")
    .map((d) => d.trim())
    .filter((d) => d !== "");
}

/** WhitelistEdits are the domains added and taken off here, not yet saved. */
interface WhitelistEdits {
  add: string[];
  remove: string[];
}

const NO_EDITS: WhitelistEdits = { add: [], remove: [] };

/**
 * applyEdits puts the edits over a stored list: the domains taken off go, the ones added
 * come last, each once whatever its case. Applied to the list stored at save time, a domain
 * another administrator added or took off meanwhile stays as they left it.
 */
export function applyEdits(list: string[], edits: WhitelistEdits): string[] {
  const gone = new Set(edits.remove.map((d) => d.toLowerCase()));
  const out: string[] = [];
  const have = new Set<string>();
  for (const d of [...list, ...edits.add]) {
    const key = d.toLowerCase();
    if (gone.has(key) || have.has(key)) continue;
    have.add(key);
    out.push(d);
  }
  return out;
}

/** WhitelistSection switches the e-mail restrictions (at once) and edits the allowed domains as tags. */
export function WhitelistSection() {
  useSignals();
  const { t } = useTranslation();
  const l = (k: string, o?: Record<string, unknown>) => t(`options.whitelist.${k}`, o);
  const [edits, setEdits] = useState<WhitelistEdits>(NO_EDITS);
  const [saving, setSaving] = useState(false);
  const stored = () => splitDomains(options.value[KEY] ?? "");
  const domains = applyEdits(stored(), edits);
  const [input, setInput] = useState("");
  const add = () => {
    // The field may hold several domains ("a.com, b.com"): each is added
    // once, whatever its case or a leading "@".
    const have = new Set(domains.map((d) => d.toLowerCase()));
    const fresh: string[] = [];
    for (const d of input.split(/[\s,]+/)) {
      const domain = d.trim().toLowerCase().replace(/^@/, "");
      if (domain === "" || have.has(domain)) continue;
      have.add(domain);
      fresh.push(domain);
    }
    if (fresh.length === 0) {
      if (input.trim() !== "") toast.info(l("exists"));
      return;
    }
    const added = new Set(fresh);
    setEdits((e) => ({ add: [...e.add, ...fresh], remove: e.remove.filter((d) => !added.has(d.toLowerCase())) }));
    setInput("");
  };
  const remove = (domain: string) => {
    const key = domain.toLowerCase();
    const listed = stored().some((d) => d.toLowerCase() === key);
    setEdits((e) => ({ add: e.add.filter((d) => d.toLowerCase() !== key), remove: listed ? [...e.remove, domain] : e.remove }));
  };
  // Only the edits made here are sent, over the list stored now (which follows other
  // administrators' saves): a whole list read earlier would put back what they changed.
  const save = async () => {
    const now = stored();
    const next = applyEdits(now, edits).join(",");
    setSaving(true);
    try {
      const saved = await saveOptions(next === now.join(",") ? [] : [[KEY, next]]);
      if (saved.includes(KEY) || next === now.join(",")) setEdits(NO_EDITS);
    } finally {
      setSaving(false);
    }
  };
  return (
    <OptionSection
      id="whitelist"
      title={l("title")}
      description={l("description")}
      onSave={() => void save()}
      saveLabel={l("save")}
      saving={saving}
    >
      <LiveSwitch k="EmailDomainRestrictionEnabled" label={l("EmailDomainRestrictionEnabled")} />
      <LiveSwitch k="EmailAliasRestrictionEnabled" label={l("EmailAliasRestrictionEnabled")} />
      <Field id="whitelist-input" label={l("EmailDomainWhitelist")}>
        <div className="option-tags" data-testid="whitelist-tags">
          {domains.length === 0 ? (
            <Text size="2" color="gray">
              {l("empty")}
            </Text>
          ) : null}
          {domains.map((d) => (
            <Badge key={d} size="2" variant="soft" data-testid="whitelist-tag">
              {d}
              <button type="button" className="option-tag-remove" aria-label={l("remove", { domain: d })} onClick={() => remove(d)}>
                ×
              </button>
            </Badge>
          ))}
        </div>
        <Flex gap="2" mt="2">
          <TextField.Root
            id="whitelist-input"
            className="grow"
            placeholder={l("placeholder")}
            value={input}
            onChange={(e) => setInput(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                add();
              }
            }}
          />
          <Button variant="soft" onClick={add} data-testid="whitelist-add">
            {l("add")}
          </Button>
        </Flex>
      </Field>
    </OptionSection>
  );
}
