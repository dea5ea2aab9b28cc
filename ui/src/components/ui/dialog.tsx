import { Dialog as ThemeDialog, Flex } from "@radix-ui/themes";
import type { ReactNode } from "react";
import { useReturnFocus } from "../../lib/return-focus";

/** DialogProps configure a modal dialog. */
export interface DialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: ReactNode;
  description?: ReactNode;
  children?: ReactNode;
  /** footer holds the action buttons, right-aligned. */
  footer?: ReactNode;
  maxWidth?: string;
}

/** Dialog is a modal over the Radix dialog primitive, styled by Radix Themes. */
export function Dialog({ open, onOpenChange, title, description, children, footer, maxWidth = "460px" }: DialogProps) {
  const focus = useReturnFocus();
  return (
    <ThemeDialog.Root open={open} onOpenChange={onOpenChange}>
      <ThemeDialog.Content maxWidth={maxWidth} {...focus}>
        <ThemeDialog.Title>{title}</ThemeDialog.Title>
        {description ? (
          <ThemeDialog.Description size="2" mb="3" color="gray">
            {description}
          </ThemeDialog.Description>
        ) : null}
        {children}
        {footer ? (
          <Flex gap="3" mt="4" justify="end" wrap="wrap">
            {footer}
          </Flex>
        ) : null}
      </ThemeDialog.Content>
    </ThemeDialog.Root>
  );
}

/** DialogClose wraps a button so that pressing it closes the dialog. */
export const DialogClose = ThemeDialog.Close;
