import { effect } from "@preact/signals-react";
import { ApiError } from "../api/client";
import type { User } from "../api/types";
import { loadNotice, setNotice } from "../stores/notice";
import { refreshOptions } from "../stores/options";
import { loadStatus } from "../stores/status";
import { expireSession, mergeUser, newestBalance, refreshSelf, resetBalanceSeq, user, USER_BANNED } from "../stores/user";
import { connectSocket, disconnectSocket, onOpened, onTopic, setSocketHooks } from "./socket";

type SelfUpdate = Pick<
  User,
  "id" | "username" | "display_name" | "quota" | "used_quota" | "request_count" | "status" | "role" | "group" | "aff_count" | "aff_quota" | "aff_history_quota" | "email" | "github_id" | "wechat_id" | "telegram_id" | "linux_do_id" | "has_access_token" | "access_token_id" | "has_password"
> & { balance_seq: number };

/** startLiveUpdates routes server topics into the stores and keeps the socket open while logged in. */
export function startLiveUpdates(): void {
  onTopic("user.self", (data) => {
    const update = data as Partial<SelfUpdate>;
    const current = user.value;
    if (!current || (update.id !== undefined && update.id !== current.id)) return;
    if (update.status === USER_BANNED) {
      disconnectSocket();
      expireSession(false);
      return;
    }
    mergeUser(newestBalance(update));
  });
  // Each socket counts from its own first message (a gateway restarted with its clock set back counts lower).
  onOpened(resetBalanceSeq);
  // The options changed: how quota is shown and the rest of the status follow, and so do open settings.
  onTopic("status", () => {
    void loadStatus(true);
    refreshOptions();
  });
  onTopic("notice", (data) => {
    const text = (data as { notice?: unknown })?.notice;
    if (typeof text === "string") setNotice(text);
  });
  setSocketHooks({
    sessionEnded: async () => {
      try {
        await refreshSelf(true);
        return user.value !== null;
      } catch (err) {
        return !(err instanceof ApiError) || err.status !== 401 ? user.value !== null : false;
      }
    },
    // What was pushed while the socket was down was missed: read it again.
    reconnected: () => {
      void refreshSelf(true).catch(() => {});
      void loadStatus(true);
      refreshOptions();
      void loadNotice();
    },
  });
  let connectedFor: number | null = null;
  effect(() => {
    const id = user.value?.id ?? null;
    if (id === connectedFor) return;
    disconnectSocket();
    connectedFor = id;
    if (id !== null) connectSocket();
  });
}
