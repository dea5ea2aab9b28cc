import { useSignals } from "@preact/signals-react/runtime";
import { Button, Card, Flex, Heading, Text, TextField } from "@radix-ui/themes";
import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../../api/client";
import { changePassword } from "../../../../api/user";
import { Field } from "../../../../components/ui/field";
import { toast } from "../../../../stores/toast";
import { refreshSelf, user } from "../../../../stores/user";
import { charCount, PASSWORD_MAX, PASSWORD_MIN } from "../../../../lib/account-limits";

const EMPTY = { original: "", password: "", password2: "" };

/** PasswordCard changes the password; the current one is required, unless the account has none yet. */
export function PasswordCard() {
  useSignals();
  const { t } = useTranslation();
  const first = user.value?.has_password === false;
  const [form, setForm] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  const set = (key: keyof typeof EMPTY) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [key]: e.target.value }));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!first && !form.original) {
      toast.error(t("password.needCurrent"));
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
      toast.error(t("password.mismatch"));
      return;
    }
    setBusy(true);
    try {
      await changePassword(form.password, first ? "" : form.original);
      toast.success(t("password.changed"));
      setForm(EMPTY);
      // The new password also revoked the access token: the record says so.
      void refreshSelf(true).catch(() => {});
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card size="3">
      <Heading size="4" mb="3">
        {t("password.title")}
      </Heading>
      <form onSubmit={submit} noValidate>
        <input type="text" name="username" autoComplete="username" value={user.value?.username ?? ""} readOnly hidden />
        <Flex direction="column" gap="3">
          {first ? (
            <Text size="2" color="gray" data-testid="first-password">
              {t("password.firstPassword")}
            </Text>
          ) : (
            <Field id="pw-current" label={t("password.current")}>
              <TextField.Root id="pw-current" type="password" autoComplete="current-password" value={form.original} onChange={set("original")} />
            </Field>
          )}
          <Field id="pw-new" label={t("password.new")}>
            <TextField.Root
              id="pw-new"
              type="password"
              autoComplete="new-password"
              placeholder={t("auth.passwordPlaceholder", { min: PASSWORD_MIN, max: PASSWORD_MAX })}
              value={form.password}
              onChange={set("password")}
            />
          </Field>
          <Field id="pw-new2" label={t("auth.confirmPassword")}>
            <TextField.Root id="pw-new2" type="password" autoComplete="new-password" value={form.password2} onChange={set("password2")} />
          </Field>
          <Flex>
            <Button type="submit" loading={busy} data-testid="change-password">
              {t("password.submit")}
            </Button>
          </Flex>
        </Flex>
      </form>
    </Card>
  );
}
