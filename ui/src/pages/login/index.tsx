import { Callout, Card, Flex, Heading } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { useSearch } from "wouter";
import { Icon } from "../../components/icons";
import { LoginForm } from "./parts/login-form";
import { OAuthButtons } from "./parts/oauth-buttons";

/** LoginPage offers password login and the enabled third-party logins. */
export default function LoginPage() {
  const { t } = useTranslation();
  const expired = new URLSearchParams(useSearch()).get("expired") === "true";
  return (
    <Flex justify="center" py="6">
      <Card size="4" className="auth-card">
        <Flex direction="column" gap="4">
          <Heading size="6" align="center">
            {t("auth.loginTitle")}
          </Heading>
          {expired ? (
            <Callout.Root color="amber" data-testid="expired-notice">
              <Callout.Icon>
                <Icon name="alert" />
              </Callout.Icon>
              <Callout.Text>{t("auth.expired")}</Callout.Text>
            </Callout.Root>
          ) : null}
          <LoginForm />
          <OAuthButtons />
        </Flex>
      </Card>
    </Flex>
  );
}
