import { useSignals } from "@preact/signals-react/runtime";
import { Card, Flex, Heading, Text } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { useSearch } from "wouter";
import { writeString } from "../../lib/storage";
import { status } from "../../stores/status";
import { OAuthButtons } from "../login/parts/oauth-buttons";
import { RegisterForm } from "./parts/register-form";

/** RegisterPage creates an account; an aff parameter is kept as the invite code. */
export default function RegisterPage() {
  useSignals();
  const { t } = useTranslation();
  const aff = new URLSearchParams(useSearch()).get("aff");
  useEffect(() => {
    if (aff) writeString("aff", aff);
  }, [aff]);
  const s = status.value;
  return (
    <Flex justify="center" py="6">
      <Card size="4" className="auth-card">
        <Flex direction="column" gap="4">
          <Heading size="6" align="center">
            {t("auth.registerTitle")}
          </Heading>
          {s.register_enabled === false ? (
            <Text color="gray" align="center" data-testid="register-closed">
              {t("auth.registerClosed")}
            </Text>
          ) : (
            <>
              {s.password_register_enabled === false ? (
                <Text color="gray" align="center">
                  {t("auth.passwordRegisterDisabled")}
                </Text>
              ) : (
                <RegisterForm />
              )}
              <OAuthButtons />
            </>
          )}
        </Flex>
      </Card>
    </Flex>
  );
}
