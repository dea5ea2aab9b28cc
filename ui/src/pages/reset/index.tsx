import { Button, Card, Flex, Heading, Text, TextField } from "@radix-ui/themes";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { sendResetMail } from "../../api/auth";
import { handleError } from "../../api/client";
import { CODE_COOLDOWN_S, useCountdown } from "../../components/send-code-button";
import { useTurnstile } from "../../components/turnstile-widget";
import { Field } from "../../components/ui/field";
import { toast } from "../../stores/toast";

/** ResetPage requests a password-reset mail. */
export default function ResetPage() {
  const { t } = useTranslation();
  const [email, setEmail] = useState("");
  const [busy, setBusy] = useState(false);
  const [left, startCountdown] = useCountdown();
  const turnstile = useTurnstile();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    if (!email.trim()) {
      toast.error(t("profile.needEmail"));
      return;
    }
    if (!turnstile.ready) {
      toast.info(t("auth.turnstileWait"));
      return;
    }
    setBusy(true);
    try {
      await sendResetMail(email.trim(), turnstile.token);
      toast.success(t("reset.mailSent"));
      startCountdown(CODE_COOLDOWN_S);
    } catch (err) {
      handleError(err);
    } finally {
      turnstile.reset();
      setBusy(false);
    }
  };
  return (
    <Flex justify="center" py="6">
      <Card size="4" className="auth-card">
        <form onSubmit={submit} noValidate>
          <Flex direction="column" gap="4">
            <Heading size="6" align="center">
              {t("reset.title")}
            </Heading>
            <Text size="2" color="gray">
              {t("reset.hint")}
            </Text>
            <Field id="reset-email" label={t("profile.email")}>
              <TextField.Root
                id="reset-email"
                type="email"
                autoComplete="email"
                placeholder={t("profile.emailPlaceholder")}
                value={email}
                onChange={(e) => setEmail(e.target.value)}
              />
            </Field>
            {turnstile.widget}
            {/* An explicit disabled overrides loading's: busy is named too, so a double click asks once. */}
            <Button type="submit" size="3" loading={busy} disabled={busy || left > 0}>
              {left > 0 ? t("code.resendIn", { seconds: left }) : t("reset.submit")}
            </Button>
          </Flex>
        </form>
      </Card>
    </Flex>
  );
}
