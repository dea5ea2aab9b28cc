import { Button, Flex, Spinner, Text } from "@radix-ui/themes";
import type { ReactNode } from "react";
import { Sheet } from "./sheet";

/** FormSheetProps configure a drawer that edits one record. */
export interface FormSheetProps {
  open: boolean;
  /** onClose is called by the cancel button, the close button and Escape. */
  onClose: () => void;
  title: ReactNode;
  side?: "left" | "right";
  testId: string;
  cancelLabel: ReactNode;
  submitLabel: ReactNode;
  /** submitTestId names the submit button for the browser tests. */
  submitTestId: string;
  onSubmit: () => void;
  /** busy shows the submit button working while the save is in flight. */
  busy: boolean;
  submitDisabled?: boolean;
  /** loadingText, when set, is shown with a spinner above the form (the record is being read). */
  loadingText?: ReactNode;
  children?: ReactNode;
}

/** FormSheet is a Sheet with the console's cancel and submit footer; its fields are one form, so Enter submits it. */
export function FormSheet({ open, onClose, title, side, testId, cancelLabel, submitLabel, submitTestId, onSubmit, busy, submitDisabled, loadingText, children }: FormSheetProps) {
  return (
    <Sheet
      open={open}
      onOpenChange={(o) => {
        if (!o) onClose();
      }}
      title={title}
      side={side}
      testId={testId}
      footer={
        <>
          <Button variant="soft" color="gray" onClick={onClose}>
            {cancelLabel}
          </Button>
          {/* Not again while busy: a double click sends the form once. */}
          <Button onClick={() => !busy && onSubmit()} loading={busy} disabled={submitDisabled || busy} data-testid={submitTestId}>
            {submitLabel}
          </Button>
        </>
      }
    >
      {loadingText ? (
        <Flex align="center" gap="2">
          <Spinner />
          <Text size="2" color="gray">
            {loadingText}
          </Text>
        </Flex>
      ) : null}
      {/* Enter in a single-line field submits as the button does (not again while busy); a textarea and the fields with their own Enter (models, groups) keep it. */}
      <form
        noValidate
        style={{ display: "contents" }}
        onSubmit={(e) => {
          e.preventDefault();
          if (!busy && !submitDisabled) onSubmit();
        }}
      >
        {children}
        <button type="submit" hidden />
      </form>
    </Sheet>
  );
}
