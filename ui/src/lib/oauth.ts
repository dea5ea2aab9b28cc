import { getOAuthState } from "../api/auth";
import { status } from "../stores/status";

/** OAuthProvider is a provider with a redirect flow back to /oauth/{provider}. */
export type OAuthProvider = "github" | "linuxdo";

/** DEFAULT_AUTHORIZE_URL is each provider's consent page when the status object names none. */
const DEFAULT_AUTHORIZE_URL: Record<OAuthProvider, string> = {
  github: "https://github.com/login/oauth/authorize",
  linuxdo: "https://connect.linux.do/oauth2/authorize",
};

/** oauthRedirectUri is where a provider sends the browser back: this console's callback page. */
export function oauthRedirectUri(provider: OAuthProvider): string {
  return `${window.location.origin}/oauth/${provider}`;
}

/** authorizeUrl builds the consent-page address for a state from GET /api/oauth/state. */
export function authorizeUrl(provider: OAuthProvider, clientId: string, state: string): string {
  const s = status.value;
  const base = (provider === "github" ? s.github_authorize_url : s.linuxdo_authorize_url) || DEFAULT_AUTHORIZE_URL[provider];
  const params = new URLSearchParams({ client_id: clientId, state, redirect_uri: oauthRedirectUri(provider) });
  if (provider === "github") params.set("scope", "user:email");
  else params.set("response_type", "code");
  return `${base}${base.includes("?") ? "&" : "?"}${params}`;
}

/** startOAuth sends the browser to the provider's consent page with a fresh state; a logged-in session makes it a binding. */
export async function startOAuth(provider: OAuthProvider, clientId: string, aff?: string): Promise<void> {
  const state = await getOAuthState(aff);
  window.location.href = authorizeUrl(provider, clientId, state);
}

/** startGitHubOAuth sends the browser to GitHub's consent page with a fresh state. */
export function startGitHubOAuth(clientId: string, aff?: string): Promise<void> {
  return startOAuth("github", clientId, aff);
}

/** startLinuxDOOAuth sends the browser to LinuxDO's consent page with a fresh state. */
export function startLinuxDOOAuth(clientId: string, aff?: string): Promise<void> {
  return startOAuth("linuxdo", clientId, aff);
}

/**
 * telegramLoginAuthUrl is where the Telegram widget sends a login: the console's callback page, which calls the API
 * with the widget's parameters. The state ties the login to this session: Telegram's signed data stays valid for a
 * day, so without it anyone could send a browser a link with their own login and sign the visitor into their account.
 */
export async function telegramLoginAuthUrl(): Promise<string> {
  const state = await getOAuthState();
  return `${window.location.origin}/oauth/telegram?state=${encodeURIComponent(state)}`;
}

/**
 * telegramBindAuthUrl is where the Telegram widget sends a binding: the server route itself, which answers with a
 * redirect to the settings page. The state ties the redirect to this session, so no other site can send a
 * logged-in browser there with someone else's Telegram data.
 */
export async function telegramBindAuthUrl(): Promise<string> {
  const state = await getOAuthState();
  try {
    sessionStorage.setItem(TELEGRAM_BIND_KEY, "1");
  } catch {
    /* storage disabled: the result is not reported */
  }
  return `${window.location.origin}/api/oauth/telegram/bind?state=${encodeURIComponent(state)}`;
}

// TELEGRAM_BIND_KEY marks, for this tab, a Telegram binding started here and not yet reported.
const TELEGRAM_BIND_KEY = "telegram_bind";

/**
 * takeTelegramBind reports whether this tab started a Telegram binding whose result has not been shown, and forgets
 * it: the settings page reports a bind=telegram or error= in its address only then, so a link from elsewhere cannot
 * make the console show a message of its author's choosing.
 */
export function takeTelegramBind(): boolean {
  try {
    const started = sessionStorage.getItem(TELEGRAM_BIND_KEY) !== null;
    sessionStorage.removeItem(TELEGRAM_BIND_KEY);
    return started;
  } catch {
    return false;
  }
}
