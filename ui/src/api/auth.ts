import { api, type Query } from "./client";
import type { User } from "./types";

/** sendVerificationCode mails a six-character code to the address. */
export async function sendVerificationCode(email: string, turnstile = ""): Promise<void> {
  await api.get("/api/verification", { query: { email, turnstile }, cooldownMessage: true });
}

/** sendResetMail mails a password-reset link. */
export async function sendResetMail(email: string, turnstile = ""): Promise<void> {
  await api.get("/api/reset_password", { query: { email, turnstile }, cooldownMessage: true });
}

/** confirmReset exchanges the mailed token for a new password, which it returns. */
export async function confirmReset(email: string, token: string): Promise<string> {
  return (await api.post<string>("/api/user/reset", { email, token })).data;
}

/** bindEmail attaches a verified address to the caller's account. */
export async function bindEmail(email: string, code: string): Promise<void> {
  await api.get("/api/oauth/email/bind", { query: { email, code } });
}

/** getOAuthState returns a fresh state string stored in the session. */
export async function getOAuthState(aff?: string): Promise<string> {
  return (await api.get<string>("/api/oauth/state", { query: { aff: aff || undefined } })).data;
}

/**
 * wechatLogin logs in with a code shown by the WeChat official account. The state ties the login to this session:
 * the code is its WeChat user's for minutes, so without it anyone could send a browser a link with their own code
 * and sign the visitor into their account.
 */
export async function wechatLogin(code: string): Promise<User> {
  const state = await getOAuthState();
  return (await api.get<User>("/api/oauth/wechat", { query: { code, state } })).data;
}

/** wechatBind binds the caller's account to WeChat. */
export async function wechatBind(code: string): Promise<void> {
  await api.get("/api/oauth/wechat/bind", { query: { code } });
}

/** OAuthResult is a callback answer: "bind" as message for a binding, otherwise a login. */
export interface OAuthResult {
  message: string;
  user: User | null;
}

/** oauthCallback completes a GitHub or LinuxDO redirect. */
export async function oauthCallback(provider: "github" | "linuxdo", code: string, state: string, redirectUri: string, error = ""): Promise<OAuthResult> {
  // redirect_uri repeats the authorize step's, which the code exchange must carry; a provider's
  // error (the user declined) goes to the server, which answers it first.
  const query: Record<string, string> = { code, state, redirect_uri: redirectUri };
  if (error) query.error = error;
  const r = await api.get<User | null>(`/api/oauth/${provider}`, { query });
  return { message: r.message, user: r.data ?? null };
}

/** telegramLogin signs in with the Telegram widget's parameters, passed on unchanged because Telegram signed them. */
export async function telegramLogin(params: URLSearchParams): Promise<User> {
  const query: Query = {};
  params.forEach((value, key) => {
    query[key] = value;
  });
  return (await api.get<User>("/api/oauth/telegram/login", { query, anonymous: true })).data;
}
