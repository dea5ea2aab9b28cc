import { Button } from "@radix-ui/themes";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { AlertDialog } from "./ui/alert-dialog";

/** ConfirmDialogProps configure a yes/no confirmation. */
export interface ConfirmDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: ReactNode;
  description?: ReactNode;
  children?: ReactNode;
  confirmLabel?: ReactNode;
  destructive?: boolean;
  busy?: boolean;
  onConfirm: () => void;
}

/** ConfirmDialog asks before an action; the dialog stays open until the caller closes it. */
export function ConfirmDialog({ open, onOpenChange, title, description, children, confirmLabel, destructive, busy, onConfirm }: ConfirmDialogProps) {
  const { t } = useTranslation();
  return (
    <AlertDialog
      open={open}
      onOpenChange={onOpenChange}
      title={title}
      description={description}
      cancel={
        <Button variant="soft" color="gray">
          {t("common.cancel")}
        </Button>
      }
      action={
        <Button color={destructive ? "red" : undefined} loading={busy} onClick={onConfirm}>
          {confirmLabel ?? t("common.confirm")}
        </Button>
      }
    >
      {children}
    </AlertDialog>
  );
}
