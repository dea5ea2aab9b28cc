import { Flex, Spinner, Text } from "@radix-ui/themes";
import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { useLocation, useParams, useSearch } from "wouter";
import { oauthCallback } from "../../api/auth";
import { afterLoginPath } from "../../lib/after-login";
import { toast } from "../../stores/toast";
import { startSession } from "../../stores/user";
import NotFoundPage from "../not-found";

const PROVIDERS = ["github", "linuxdo"] as const;
type Provider = (typeof PROVIDERS)[number];

/** OAuthCallbackPage completes a GitHub or LinuxDO redirect: a binding or a login. */
export default function OAuthCallbackPage() {
  const { t } = useTranslation();
  const { provider } = useParams<{ provider: string }>();
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const started = useRef(false);
  const known = (PROVIDERS as readonly string[]).includes(provider);
  const code = search.get("code") ?? "";
  const state = search.get("state") ?? "";
  useEffect(() => {
    if (!known || started.current) return;
    started.current = true;
    oauthCallback(provider as Provider, code, state)
      .then((r) => {
        if (r.message === "bind") {
          toast.success(t("profile.bindSuccess"));
          navigate("/setting?tab=personal", { replace: true });
        } else if (r.user) {
          startSession(r.user);
          toast.success(t("auth.loginSuccess"));
          navigate(afterLoginPath(), { replace: true });
        } else {
          navigate("/login", { replace: true });
        }
      })
      .catch(() => {
        toast.error(t("auth.oauthFailed"));
        navigate("/setting?tab=personal", { replace: true });
      });
  }, [known, provider, code, state, navigate, t]);
  if (!known) return <NotFoundPage />;
  return (
    <Flex direction="column" align="center" gap="3" py="9">
      <Spinner size="3" />
      <Text color="gray">{t("auth.oauthWorking")}</Text>
    </Flex>
  );
}
