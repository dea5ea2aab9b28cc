import { getOAuthState } from "../api/auth";

/** startGitHubOAuth sends the browser to GitHub's consent page with a fresh state. */
export async function startGitHubOAuth(clientId: string, aff?: string): Promise<void> {
  const state = await getOAuthState(aff);
  const params = new URLSearchParams({ client_id: clientId, state, scope: "user:email" });
  window.location.href = `https://github.com/login/oauth/authorize?${params}`;
}

/** startLinuxDOOAuth sends the browser to LinuxDO's consent page with a fresh state. */
export async function startLinuxDOOAuth(clientId: string, aff?: string): Promise<void> {
  const state = await getOAuthState(aff);
  const params = new URLSearchParams({ response_type: "code", client_id: clientId, state });
  window.location.href = `https://connect.linux.do/oauth2/authorize?${params}`;
}
