import { AlertDialog as ThemeAlertDialog, Flex } from "@radix-ui/themes";
import type { ReactNode } from "react";
import { useReturnFocus } from "../../lib/return-focus";

/** AlertDialogProps configure a confirmation that interrupts the user. */
export interface AlertDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: ReactNode;
  description?: ReactNode;
  children?: ReactNode;
  /** cancel is the button that dismisses; action the one that proceeds. */
  cancel: ReactNode;
  action: ReactNode;
}

/** AlertDialog is a confirmation over the Radix alert-dialog primitive. */
export function AlertDialog({ open, onOpenChange, title, description, children, cancel, action }: AlertDialogProps) {
  const focus = useReturnFocus();
  return (
    <ThemeAlertDialog.Root open={open} onOpenChange={onOpenChange}>
      <ThemeAlertDialog.Content maxWidth="460px" {...focus}>
        <ThemeAlertDialog.Title>{title}</ThemeAlertDialog.Title>
        {description ? (
          <ThemeAlertDialog.Description size="2" color="gray">
            {description}
          </ThemeAlertDialog.Description>
        ) : null}
        {children}
        <Flex gap="3" mt="4" justify="end">
          <ThemeAlertDialog.Cancel>{cancel}</ThemeAlertDialog.Cancel>
          {action}
        </Flex>
      </ThemeAlertDialog.Content>
    </ThemeAlertDialog.Root>
  );
}
