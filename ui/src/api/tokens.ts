import { api } from "./client";

/** Token is an API key of the caller; key is stored and sent without the "sk-" prefix. */
export interface Token {
  id: number;
  user_id?: number;
  key: string;
  status: number;
  name: string;
  created_time: number;
  accessed_time?: number;
  /** expired_time is unix seconds; -1 means never. */
  expired_time: number;
  remain_quota: number;
  unlimited_quota: boolean;
  used_quota: number;
  model_limits_enabled: boolean;
  /** model_limits is a comma-joined list. */
  model_limits: string;
  /** allow_ips holds one address per line. */
  allow_ips: string;
  group: string;
}

/** TokenInput is the body of create and edit (edit adds id; an edit without remain_quota keeps it). */
export interface TokenInput {
  id?: number;
  name: string;
  expired_time: number;
  remain_quota?: number;
  unlimited_quota: boolean;
  model_limits_enabled: boolean;
  model_limits: string;
  allow_ips: string;
  group: string;
}

/** listTokens reads one page of the caller's tokens (p is 0-based). */
export async function listTokens(p: number, size: number): Promise<Token[]> {
  return (await api.get<Token[]>("/api/token/", { query: { p, size } })).data ?? [];
}

/** searchTokens matches a name substring and a key substring; not paged. */
export async function searchTokens(keyword: string, token: string): Promise<Token[]> {
  return (await api.get<Token[]>("/api/token/search", { query: { keyword, token } })).data ?? [];
}

/** getToken reads one of the caller's tokens. */
export async function getToken(id: number): Promise<Token> {
  return (await api.get<Token>(`/api/token/${id}`)).data;
}

/** createToken creates a token; the answer carries the stored token. */
export async function createToken(input: TokenInput): Promise<Token | null> {
  return (await api.post<Token | null>("/api/token/", input)).data ?? null;
}

/** updateToken writes every field of the form. */
export async function updateToken(input: TokenInput & { id: number }): Promise<Token> {
  return (await api.put<Token>("/api/token/", input)).data;
}

/** setTokenStatus enables (1) or disables (2) a token. */
export async function setTokenStatus(id: number, status: number): Promise<Token> {
  return (await api.put<Token>("/api/token/", { id, status }, { query: { status_only: true } })).data;
}

/** deleteToken removes a token. */
export async function deleteToken(id: number): Promise<void> {
  await api.del(`/api/token/${id}/`);
}

/** userModels lists the model names of the caller's group, or of another group the caller may use. */
export async function userModels(group = ""): Promise<string[]> {
  return (await api.get<string[]>("/api/user/models", { query: group ? { group } : undefined })).data ?? [];
}

/** selfGroups maps each group the caller may pick to its description. */
export async function selfGroups(): Promise<Record<string, string>> {
  return (await api.get<Record<string, string>>("/api/user/self/groups")).data ?? {};
}
