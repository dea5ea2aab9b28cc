import { Text } from "@radix-ui/themes";
import { Label } from "radix-ui";
import type { ReactNode } from "react";

/** FieldProps describe one labelled form control. */
export interface FieldProps {
  id: string;
  label: ReactNode;
  hint?: ReactNode;
  children: ReactNode;
}

/** Field pairs a Radix label primitive with its control and an optional hint. */
export function Field({ id, label, hint, children }: FieldProps) {
  return (
    <div className="field">
      <Label.Root htmlFor={id} className="field-label">
        <Text size="2" weight="medium">
          {label}
        </Text>
      </Label.Root>
      {children}
      {hint ? (
        <Text size="1" color="gray">
          {hint}
        </Text>
      ) : null}
    </div>
  );
}
