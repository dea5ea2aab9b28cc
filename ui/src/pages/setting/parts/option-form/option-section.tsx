import { Button, Card, Flex, Grid, Heading, Text } from "@radix-ui/themes";
import type { ReactNode } from "react";
import "./option-form.css";

/** OptionSectionProps configure one card of option fields. */
export interface OptionSectionProps {
  /** id names the section in test ids: section-{id} and save-{id}. */
  id: string;
  title: ReactNode;
  description?: ReactNode;
  children: ReactNode;
  /** onSave adds the save button; sections of switches that save at once leave it out. */
  onSave?: () => void;
  saveLabel?: ReactNode;
  saving?: boolean;
  /** actions are further buttons beside the save button. */
  actions?: ReactNode;
  className?: string;
}

/** OptionSection is a card holding one group of options and its save button. */
export function OptionSection({ id, title, description, children, onSave, saveLabel, saving, actions, className }: OptionSectionProps) {
  return (
    <Card size="3" data-testid={`section-${id}`} className={className}>
      <Heading size="4" mb={description ? "1" : "3"}>
        {title}
      </Heading>
      {description ? (
        <Text as="p" size="2" color="gray" mb="3">
          {description}
        </Text>
      ) : null}
      <Flex direction="column" gap="3">
        {children}
      </Flex>
      {onSave || actions ? (
        <Flex gap="2" mt="4" wrap="wrap">
          {onSave ? (
            <Button onClick={onSave} loading={saving} data-testid={`save-${id}`}>
              {saveLabel}
            </Button>
          ) : null}
          {actions}
        </Flex>
      ) : null}
    </Card>
  );
}

/** FieldGrid lays short fields out in two columns on wide screens. */
export function FieldGrid({ children }: { children: ReactNode }) {
  return (
    <Grid columns={{ initial: "1", sm: "2" }} gap="3">
      {children}
    </Grid>
  );
}
