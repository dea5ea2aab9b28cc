import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Link as TextLink, Text, TextField } from "@radix-ui/themes";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { Link, useLocation } from "wouter";
import { handleError } from "../../../api/client";
import { login } from "../../../api/user";
import { useTurnstile } from "../../../components/turnstile-widget";
import { Field } from "../../../components/ui/field";
import { serverText } from "../../../i18n/server";
import { AFTER_LOGIN_FALLBACK, afterLoginPath, forgetAskedPage } from "../../../lib/after-login";
import { status } from "../../../stores/status";
import { toast } from "../../../stores/toast";
import { startSession } from "../../../stores/user";

/** LoginForm is the username and password form. */
export function LoginForm() {
  useSignals();
  const { t } = useTranslation();
  const [, navigate] = useLocation();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const turnstile = useTurnstile();
  if (status.value.password_login_enabled === false) {
    return (
      <Text color="gray" align="center">
        {t("auth.passwordLoginDisabled")}
      </Text>
    );
  }
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!username.trim() || !password) {
      toast.error(t("auth.needUsernamePassword"));
      return;
    }
    if (!turnstile.ready) {
      toast.info(t("auth.turnstileWait"));
      return;
    }
    setBusy(true);
    try {
      const r = await login(username.trim(), password, turnstile.token);
      startSession(r.user);
      toast.success(t("auth.loginSuccess"));
      if (r.message) {
        // The default password: logged in, and warned.
        toast.warning(serverText(r.message));
        forgetAskedPage();
        navigate(AFTER_LOGIN_FALLBACK);
      } else {
        navigate(afterLoginPath(r.user.role));
      }
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
        <Field id="login-username" label={t("auth.username")}>
          <TextField.Root
            id="login-username"
            name="username"
            autoComplete="username"
            placeholder={t("auth.usernameOrEmail")}
            value={username}
            onChange={(e) => setUsername(e.target.value)}
          />
        </Field>
        <Field id="login-password" label={t("auth.password")}>
          <TextField.Root
            id="login-password"
            name="password"
            type="password"
            autoComplete="current-password"
            placeholder={t("auth.password")}
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </Field>
        {turnstile.widget}
        <Button type="submit" size="3" loading={busy} data-testid="login-submit">
          {t("auth.login")}
        </Button>
        <Flex justify="between" wrap="wrap" gap="2">
          {status.value.register_enabled !== false ? (
            <Text size="2">
              {t("auth.noAccount")}{" "}
              <TextLink asChild>
                <Link href="/register">{t("auth.register")}</Link>
              </TextLink>
            </Text>
          ) : (
            <span />
          )}
          <Text size="2">
            <TextLink asChild>
              <Link href="/reset">{t("auth.forgotPassword")}</Link>
            </TextLink>
          </Text>
        </Flex>
      </Flex>
    </form>
  );
}
