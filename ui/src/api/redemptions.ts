import { api } from "./client";

/** REDEMPTIONS_SERVER_PAGE is how many codes one GET /api/redemption/?p= answer holds. */
export const REDEMPTIONS_SERVER_PAGE = 10;

/** Redemption statuses. */
export const REDEMPTION_UNUSED = 1;
export const REDEMPTION_DISABLED = 2;
export const REDEMPTION_USED = 3;

/** Redemption is one redemption code. */
export interface Redemption {
  id: number;
  name: string;
  key: string;
  status: number;
  quota: number;
  created_time: number;
  redeemed_time?: number;
  /** used_user_id is 0 while nobody redeemed the code. */
  used_user_id: number;
}

/** NewRedemptions asks for count codes of one name and quota. */
export interface NewRedemptions {
  name: string;
  quota: number;
  count: number;
}

/** listRedemptions reads one server page (p is 0-based, 10 codes each). */
export async function listRedemptions(p: number): Promise<Redemption[]> {
  return (await api.get<Redemption[]>("/api/redemption/", { query: { p } })).data ?? [];
}

/** searchRedemptions matches an id or a name prefix; not paged. */
export async function searchRedemptions(keyword: string): Promise<Redemption[]> {
  return (await api.get<Redemption[]>("/api/redemption/search", { query: { keyword } })).data ?? [];
}

/** getRedemption reads one code. */
export async function getRedemption(id: number): Promise<Redemption> {
  return (await api.get<Redemption>(`/api/redemption/${id}`)).data;
}

/** createRedemptions creates the codes and returns their keys. */
export async function createRedemptions(input: NewRedemptions): Promise<string[]> {
  const data = (await api.post<string[]>("/api/redemption/", input)).data;
  return Array.isArray(data) ? data : [];
}

/** updateRedemption changes the name and quota of a code. */
export async function updateRedemption(input: { id: number; name: string; quota: number }): Promise<void> {
  await api.put("/api/redemption/", input);
}

/** setRedemptionStatus enables (1) or disables (2) a code. */
export async function setRedemptionStatus(id: number, status: number): Promise<void> {
  await api.put("/api/redemption/", { id, status }, { query: { status_only: true } });
}

/** deleteRedemption removes a code. */
export async function deleteRedemption(id: number): Promise<void> {
  await api.del(`/api/redemption/${id}/`);
}
