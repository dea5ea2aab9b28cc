import { Button, Card, Code, Flex, Heading, Text } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { useSearch } from "wouter";
import { confirmReset } from "../../api/auth";
import { handleError } from "../../api/client";
import { plausibleEmail } from "../../lib/account-limits";
import { copyText } from "../../stores/clipboard";
import { toast } from "../../stores/toast";

/** UserResetPage confirms a mailed reset link and shows the new password. */
export default function UserResetPage() {
  const { t } = useTranslation();
  const params = new URLSearchParams(useSearch());
  const email = params.get("email") ?? "";
  const token = params.get("token") ?? "";
  const [busy, setBusy] = useState(false);
  const [password, setPassword] = useState("");
  // The address is shown on the page: a link carrying other text (a message of its author's) is no reset link.
  const valid = plausibleEmail(email) && token !== "";
  const submit = async () => {
    setBusy(true);
    try {
      const next = await confirmReset(email, token);
      setPassword(next);
      if (await copyText(next)) toast.success(t("reset.newPasswordCopied"));
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Flex justify="center" py="6">
      <Card size="4" className="auth-card">
        <Flex direction="column" gap="4">
          <Heading size="6" align="center">
            {t("reset.confirmTitle")}
          </Heading>
          {!valid ? (
            <Text color="red">{t("reset.invalidLink")}</Text>
          ) : (
            <>
              <Text size="2">
                {t("profile.email")}: <Code>{email}</Code>
              </Text>
              {password ? (
                <Flex direction="column" gap="2" data-testid="new-password">
                  <Text size="2">{t("reset.newPassword")}</Text>
                  <Code size="4" className="selectable">
                    {password}
                  </Code>
                  <Button variant="soft" onClick={() => void copyText(password).then((ok) => ok && toast.success(t("copy.done")))}>
                    {t("copy.action")}
                  </Button>
                </Flex>
              ) : (
                <Button size="3" loading={busy} onClick={submit}>
                  {t("reset.confirm")}
                </Button>
              )}
            </>
          )}
        </Flex>
      </Card>
    </Flex>
  );
}
