import { Flex, Spinner, Text } from "@radix-ui/themes";
import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { useLocation, useParams, useSearch } from "wouter";
import { oauthCallback, telegramLogin, type OAuthResult } from "../../api/auth";
import { afterLoginPath } from "../../lib/after-login";
import { oauthRedirectUri } from "../../lib/oauth";
import { toast } from "../../stores/toast";
import { isLoggedIn, startSession } from "../../stores/user";
import NotFoundPage from "../not-found";

const PROVIDERS = ["github", "linuxdo", "telegram"] as const;
type Provider = (typeof PROVIDERS)[number];

/** FAILURE_REDIRECT_MS is how long a failure stays on screen before the redirect. */
const FAILURE_REDIRECT_MS = 1500;

/** complete asks the server to finish the redirect: GitHub and LinuxDO send code and state, Telegram its signed login. */
async function complete(provider: Provider, search: URLSearchParams): Promise<OAuthResult> {
  if (provider === "telegram") return { message: "", user: await telegramLogin(search) };
  return oauthCallback(provider, search.get("code") ?? "", search.get("state") ?? "", oauthRedirectUri(provider), search.get("error") ?? "");
}

/** OAuthCallbackPage completes a third-party redirect: a binding (answer message "bind") or a login. */
export default function OAuthCallbackPage() {
  const { t } = useTranslation();
  const { provider } = useParams<{ provider: string }>();
  const search = useSearch();
  const [, navigate] = useLocation();
  const started = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const known = (PROVIDERS as readonly string[]).includes(provider);
  useEffect(() => {
    if (!known || started.current) return;
    started.current = true;
    complete(provider as Provider, new URLSearchParams(search))
      .then((r) => {
        if (r.message === "bind") {
          toast.success(t("profile.bindSuccess"));
          navigate("/setting?tab=personal", { replace: true });
        } else if (r.user) {
          startSession(r.user);
          toast.success(t("auth.loginSuccess"));
          // A third-party login lands on the home page (A §1), or on the page that sent the visitor to the login.
          navigate(afterLoginPath(r.user.role, "/"), { replace: true });
        } else {
          navigate("/login", { replace: true });
        }
      })
      .catch(() => {
        // The server's message was already shown by the API client.
        toast.error(t("auth.oauthFailed"));
        // A failed binding goes back to the settings, a failed login to the login page (through the guarded
        // settings, the next login would return there instead of its own landing page).
        const back = isLoggedIn.value ? "/setting?tab=personal" : "/login";
        timer.current = setTimeout(() => navigate(back, { replace: true }), FAILURE_REDIRECT_MS);
      });
  }, [known, provider, search, navigate, t]);
  if (!known) return <NotFoundPage />;
  return (
    <Flex direction="column" align="center" gap="3" py="9">
      <Spinner size="3" />
      <Text color="gray">{t("auth.oauthWorking")}</Text>
    </Flex>
  );
}
