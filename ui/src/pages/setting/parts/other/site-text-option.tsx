import { Button, Flex } from "@radix-ui/themes";
import { TextAreaOption, TextOption } from "../option-form/option-fields";
import { useOptionDraft } from "../option-form/use-option-draft";

/** SiteTextOptionProps configure one site-text option with its own save button. */
export interface SiteTextOptionProps {
  k: string;
  label: string;
  hint?: string;
  saveLabel: string;
  placeholder?: string;
  /** rows makes the field a textarea of that height. */
  rows?: number;
}

/** SiteTextOption edits one site text and saves it alone; the status object is reloaded after, so the shell updates. */
export function SiteTextOption({ k, label, hint, saveLabel, placeholder, rows }: SiteTextOptionProps) {
  const draft = useOptionDraft([k]);
  const field = { draft, k, label, hint, placeholder };
  return (
    <Flex direction="column" gap="2">
      {rows ? <TextAreaOption {...field} rows={rows} /> : <TextOption {...field} />}
      <Flex>
        <Button variant="soft" loading={draft.saving} onClick={() => void draft.save(draft.changes())} data-testid={`save-${k}`}>
          {saveLabel}
        </Button>
      </Flex>
    </Flex>
  );
}
