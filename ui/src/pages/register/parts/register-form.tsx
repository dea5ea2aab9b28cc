import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Link as TextLink, Text, TextField } from "@radix-ui/themes";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { Link, useLocation } from "wouter";
import { sendVerificationCode } from "../../../api/auth";
import { handleError } from "../../../api/client";
import { register } from "../../../api/user";
import { SendCodeButton } from "../../../components/send-code-button";
import { useTurnstile } from "../../../components/turnstile-widget";
import { Field } from "../../../components/ui/field";
import { charCount, inputMax, PASSWORD_MAX, PASSWORD_MIN, USERNAME_MAX } from "../../../lib/account-limits";
import { readString } from "../../../lib/storage";
import { status } from "../../../stores/status";
import { toast } from "../../../stores/toast";

/** RegisterForm collects the new account's fields and validates them before sending. */
export function RegisterForm() {
  useSignals();
  const { t } = useTranslation();
  const [, navigate] = useLocation();
  const [form, setForm] = useState({ username: "", password: "", password2: "", email: "", verification_code: "" });
  const [busy, setBusy] = useState(false);
  const turnstile = useTurnstile();
  const emailVerification = status.value.email_verification === true;
  const set = (key: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [key]: e.target.value }));

  const sendCode = async (): Promise<boolean> => {
    if (!form.email.trim()) {
      toast.error(t("profile.needEmail"));
      return false;
    }
    if (!turnstile.ready) {
      toast.info(t("auth.turnstileWait"));
      return false;
    }
    try {
      await sendVerificationCode(form.email.trim(), turnstile.token);
    } finally {
      turnstile.reset();
    }
    toast.success(t("code.sent"));
    return true;
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!form.username.trim() || !form.password) {
      toast.error(t("auth.needUsernamePassword"));
      return;
    }
    if (charCount(form.password) < PASSWORD_MIN) {
      toast.error(t("auth.passwordTooShort"));
      return;
    }
    if (charCount(form.password) > PASSWORD_MAX) {
      toast.error(t("auth.passwordTooLong"));
      return;
    }
    if (form.password !== form.password2) {
      toast.error(t("auth.passwordMismatch"));
      return;
    }
    if (emailVerification && (!form.email.trim() || !form.verification_code.trim())) {
      toast.error(form.email.trim() ? t("profile.needCode") : t("profile.needEmail"));
      return;
    }
    if (!turnstile.ready) {
      toast.info(t("auth.turnstileWait"));
      return;
    }
    setBusy(true);
    try {
      await register(
        {
          username: form.username.trim(),
          password: form.password,
          password2: form.password2,
          email: emailVerification ? form.email.trim() : "",
          verification_code: emailVerification ? form.verification_code.trim() : "",
          aff_code: readString("aff") ?? "",
        },
        turnstile.token,
      );
      toast.success(t("auth.registerSuccess"));
      navigate("/login");
    } catch (err) {
      handleError(err);
    } finally {
      turnstile.reset();
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate>
      <Flex direction="column" gap="3">
        <Field id="reg-username" label={t("auth.username")}>
          <TextField.Root
            id="reg-username"
            name="username"
            autoComplete="username"
            maxLength={inputMax(USERNAME_MAX)}
            placeholder={t("auth.usernamePlaceholder", { max: USERNAME_MAX })}
            value={form.username}
            onChange={set("username")}
          />
        </Field>
        <Field id="reg-password" label={t("auth.password")}>
          <TextField.Root
            id="reg-password"
            name="password"
            type="password"
            autoComplete="new-password"
            placeholder={t("auth.passwordPlaceholder", { min: PASSWORD_MIN, max: PASSWORD_MAX })}
            value={form.password}
            onChange={set("password")}
          />
        </Field>
        <Field id="reg-password2" label={t("auth.confirmPassword")}>
          <TextField.Root
            id="reg-password2"
            name="password2"
            type="password"
            autoComplete="new-password"
            placeholder={t("auth.confirmPassword")}
            value={form.password2}
            onChange={set("password2")}
          />
        </Field>
        {emailVerification ? (
          <>
            <Field id="reg-email" label={t("profile.email")}>
              <Flex gap="2">
                <TextField.Root
                  id="reg-email"
                  className="grow"
                  type="email"
                  autoComplete="email"
                  placeholder={t("profile.emailPlaceholder")}
                  value={form.email}
                  onChange={set("email")}
                />
                <SendCodeButton send={sendCode} />
              </Flex>
            </Field>
            <Field id="reg-code" label={t("code.label")}>
              <TextField.Root id="reg-code" placeholder={t("code.placeholder")} value={form.verification_code} onChange={set("verification_code")} />
            </Field>
          </>
        ) : null}
        {turnstile.widget}
        <Button type="submit" size="3" loading={busy} data-testid="register-submit">
          {t("auth.register")}
        </Button>
        <Text size="2" align="center">
          {t("auth.haveAccount")}{" "}
          <TextLink asChild>
            <Link href="/login">{t("auth.login")}</Link>
          </TextLink>
        </Text>
      </Flex>
    </form>
  );
}
