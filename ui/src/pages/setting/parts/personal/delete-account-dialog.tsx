import { useSignals } from "@preact/signals-react/runtime";
import { Flex, Strong, Text, TextField } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { useLocation } from "wouter";
import { handleError } from "../../../../api/client";
import { deleteSelf } from "../../../../api/user";
import { ConfirmDialog } from "../../../../components/confirm-dialog";
import { toast } from "../../../../stores/toast";
import { logout, user } from "../../../../stores/user";

/** DeleteAccountDialog deletes the account after the user types their username. */
export function DeleteAccountDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  useSignals();
  const { t } = useTranslation();
  const [, navigate] = useLocation();
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const username = user.value?.username ?? "";
  useEffect(() => {
    if (open) setTyped("");
  }, [open]);
  const confirm = async () => {
    if (typed !== username) {
      toast.error(t("deleteAccount.typeUsername"));
      return;
    }
    setBusy(true);
    try {
      await deleteSelf();
      toast.success(t("deleteAccount.done"));
      onOpenChange(false);
      navigate("/");
      await logout();
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog
      open={open}
      onOpenChange={onOpenChange}
      title={t("deleteAccount.title")}
      description={t("deleteAccount.warning")}
      confirmLabel={t("deleteAccount.confirm")}
      destructive
      busy={busy}
      onConfirm={confirm}
    >
      <Flex direction="column" gap="2" mt="3">
        <Text size="2">
          {t("deleteAccount.prompt")} <Strong>{username}</Strong>
        </Text>
        <TextField.Root value={typed} onChange={(e) => setTyped(e.target.value)} placeholder={username} aria-label={t("deleteAccount.prompt")} data-testid="delete-confirm-input" />
      </Flex>
    </ConfirmDialog>
  );
}
