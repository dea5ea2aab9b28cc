import { Badge, Button, Flex, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Field } from "../../../../components/ui/field";
import { toast } from "../../../../stores/toast";
import { LiveSwitch } from "../option-form/option-fields";
import { OptionSection } from "../option-form/option-section";
import { useOptionDraft } from "../option-form/use-option-draft";

const KEY = "EmailDomainWhitelist";

/** splitDomains reads the comma list as trimmed, non-empty domains. */
export function splitDomains(list: string): string[] {
  return list
    .split(",")
    .map((d) => d.trim())
    .filter((d) => d !== "");
}

/** WhitelistSection switches the e-mail restrictions (at once) and edits the allowed domains as tags. */
export function WhitelistSection() {
  const { t } = useTranslation();
  const l = (k: string, o?: Record<string, unknown>) => t(`options.whitelist.${k}`, o);
  const draft = useOptionDraft([KEY], { normalize: (_k, v) => splitDomains(v).join(",") });
  const domains = splitDomains(draft.values[KEY] ?? "");
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
    draft.set(KEY, [...domains, ...fresh].join(","));
    setInput("");
  };
  const remove = (domain: string) => draft.set(KEY, domains.filter((d) => d !== domain).join(","));
  return (
    <OptionSection
      id="whitelist"
      title={l("title")}
      description={l("description")}
      onSave={() => void draft.save(draft.changes())}
      saveLabel={l("save")}
      saving={draft.saving}
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
