import { Button, Flex, TextField } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { bindEmail, sendVerificationCode } from "../../../../api/auth";
import { handleError } from "../../../../api/client";
import { SendCodeButton } from "../../../../components/send-code-button";
import { useTurnstile } from "../../../../components/turnstile-widget";
import { Dialog } from "../../../../components/ui/dialog";
import { Field } from "../../../../components/ui/field";
import { toast } from "../../../../stores/toast";
import { refreshSelf } from "../../../../stores/user";

/** EmailBindDialog verifies an address with a mailed code and binds it. */
export function EmailBindDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t } = useTranslation();
  const [email, setEmail] = useState("");
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const turnstile = useTurnstile();
  useEffect(() => {
    if (open) setCode("");
  }, [open]);
  const send = async (): Promise<boolean> => {
    if (!email.trim()) {
      toast.error(t("profile.needEmail"));
      return false;
    }
    if (!turnstile.ready) {
      toast.info(t("auth.turnstileWait"));
      return false;
    }
    try {
      await sendVerificationCode(email.trim(), turnstile.token);
    } finally {
      turnstile.reset();
    }
    toast.success(t("code.sent"));
    return true;
  };
  const bind = async () => {
    if (!email.trim()) {
      toast.error(t("profile.needEmail"));
      return;
    }
    if (!code.trim()) {
      toast.error(t("profile.needCode"));
      return;
    }
    setBusy(true);
    try {
      await bindEmail(email.trim(), code.trim());
      toast.success(t("profile.emailBound"));
      onOpenChange(false);
      // Done: the dialog closes whatever the refresh after it does; its failure is not the action's.
      void refreshSelf(true).catch(() => {});
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title={t("profile.bindEmail")}
      footer={
        <>
          <Button variant="soft" color="gray" onClick={() => onOpenChange(false)}>
            {t("common.cancel")}
          </Button>
          <Button loading={busy} onClick={bind} data-testid="confirm-bind-email">
            {t("profile.bind")}
          </Button>
        </>
      }
    >
      <Flex direction="column" gap="3">
        <Field id="bind-email" label={t("profile.email")}>
          <Flex gap="2">
            <TextField.Root
              id="bind-email"
              className="grow"
              type="email"
              placeholder={t("profile.emailPlaceholder")}
              value={email}
              onChange={(e) => setEmail(e.target.value)}
            />
            <SendCodeButton send={send} />
          </Flex>
        </Field>
        <Field id="bind-code" label={t("code.label")}>
          <TextField.Root id="bind-code" placeholder={t("code.placeholder")} value={code} onChange={(e) => setCode(e.target.value)} />
        </Field>
        {turnstile.widget}
      </Flex>
    </Dialog>
  );
}
