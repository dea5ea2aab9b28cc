import { Flex, Heading, Text, Theme } from "@radix-ui/themes";
import { Dialog as DialogPrimitive } from "radix-ui";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { useReturnFocus } from "../../lib/return-focus";
import "./sheet.css";

/** SheetProps configure a side drawer. */
export interface SheetProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: ReactNode;
  description?: ReactNode;
  /** side is the edge the drawer slides from. */
  side?: "left" | "right";
  /** closeOnOutside closes the drawer on a click beside it; forms keep it false so typing is not lost. */
  closeOnOutside?: boolean;
  children?: ReactNode;
  /** footer holds the action buttons, right-aligned. */
  footer?: ReactNode;
  testId?: string;
}

/** Sheet is a side drawer over the Radix dialog primitive, themed like the rest of the console. */
export function Sheet({ open, onOpenChange, title, description, side = "right", closeOnOutside = false, children, footer, testId }: SheetProps) {
  const { t } = useTranslation();
  const focus = useReturnFocus();
  return (
    <DialogPrimitive.Root open={open} onOpenChange={onOpenChange}>
      <DialogPrimitive.Portal>
        <Theme asChild>
          <DialogPrimitive.Overlay className="sheet-overlay">
            <DialogPrimitive.Content
              className="sheet-content"
              data-side={side}
              data-testid={testId}
              {...focus}
              {...(description ? {} : { "aria-describedby": undefined })}
              onInteractOutside={(e) => {
                if (!closeOnOutside) e.preventDefault();
              }}
            >
              <div className="sheet-header">
                <DialogPrimitive.Title asChild>
                  <Heading size="5">{title}</Heading>
                </DialogPrimitive.Title>
                {description ? (
                  <DialogPrimitive.Description asChild>
                    <Text size="2" color="gray">
                      {description}
                    </Text>
                  </DialogPrimitive.Description>
                ) : null}
                <DialogPrimitive.Close className="sheet-close" aria-label={t("common.close")}>
                  ×
                </DialogPrimitive.Close>
              </div>
              <div className="sheet-body">{children}</div>
              {footer ? (
                <Flex className="sheet-footer" gap="3" justify="end" wrap="wrap">
                  {footer}
                </Flex>
              ) : null}
            </DialogPrimitive.Content>
          </DialogPrimitive.Overlay>
        </Theme>
      </DialogPrimitive.Portal>
    </DialogPrimitive.Root>
  );
}
