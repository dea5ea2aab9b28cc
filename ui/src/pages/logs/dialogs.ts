import { signal } from "@preact/signals-react";

/** UserRef is who the user info dialog is about, as the log row names them. */
export interface UserRef {
  user_id: number;
  username: string;
}

/** userInfoTarget is the user whose info dialog is open, or null. */
export const userInfoTarget = signal<UserRef | null>(null);
