import { effect } from "@preact/signals-react";
import { ApiError } from "../api/client";
import type { User } from "../api/types";
import { loadNotice, setNotice } from "../stores/notice";
import { loadStatus } from "../stores/status";
import { expireSession, mergeUser, refreshSelf, user, USER_BANNED } from "../stores/user";
import { connectSocket, disconnectSocket, onOpened, onTopic, setSocketHooks } from "./socket";

type SelfUpdate = Pick<
  User,
  "id" | "username" | "display_name" | "quota" | "used_quota" | "request_count" | "status" | "role" | "group" | "aff_count" | "aff_quota" | "aff_history_quota"
> & { balance_seq: number };

/**
 * balanceSeq is the highest balance_seq received on the current socket. Pushes of the balance can
 * arrive out of order (a charge read before a top-up, pushed after it): the balance of a lower
 * number is older than the one shown and is left out.
 */
let balanceSeq = 0;

/** selfFields is what of a user.self message to merge: all of it, less an older balance. */
export function selfFields(update: Partial<SelfUpdate>): Partial<User> {
  const { balance_seq: seq, ...fields } = update;
  if (typeof seq !== "number") return fields;
  if (seq < balanceSeq) {
    delete fields.quota;
    delete fields.used_quota;
    delete fields.request_count;
  } else {
    balanceSeq = seq;
  }
  return fields;
}

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
    mergeUser(selfFields(update));
  });
  // Each socket counts from its own first message (a restarted gateway counts from 1 again).
  onOpened(() => {
    balanceSeq = 0;
  });
  // The options changed: how quota is shown and the rest of the status follow.
  onTopic("status", () => void loadStatus(true));
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
