import { Button, Flex } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { AdminUser, UserAction } from "../../../api/users";
import { manageUser, usersDialog } from "../../../stores/users";

/** UserActions are the buttons of one live account: promote, demote, delete, disable or enable, edit. */
export function UserActions({ user }: { user: AdminUser }) {
  const { t } = useTranslation();
  const [busy, setBusy] = useState<UserAction | null>(null);
  const run = async (action: UserAction) => {
    setBusy(action);
    try {
      await manageUser(user, action);
    } finally {
      setBusy(null);
    }
  };
  const act = (action: UserAction, label: string, color?: "red" | "gray" | "orange", disabled = false) => (
    <Button size="1" variant="soft" color={color} loading={busy === action} disabled={disabled || (busy !== null && busy !== action)} onClick={() => void run(action)} data-testid={`user-${action}`}>
      {label}
    </Button>
  );
  return (
    <Flex gap="1" wrap="wrap">
      {act("promote", t("userAdmin.promote"))}
      {act("demote", t("userAdmin.demote"), "gray")}
      <Button size="1" variant="soft" color="red" onClick={() => (usersDialog.value = { kind: "delete", user })} data-testid="user-delete">
        {t("userAdmin.delete")}
      </Button>
      {user.status === 1 ? act("disable", t("userAdmin.disable"), "orange") : act("enable", t("userAdmin.enable"), undefined, user.status === 3)}
      <Button size="1" variant="soft" color="gray" onClick={() => (usersDialog.value = { kind: "edit", id: user.id })} data-testid="user-edit">
        {t("userAdmin.edit")}
      </Button>
    </Flex>
  );
}
