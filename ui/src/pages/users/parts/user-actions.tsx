import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex } from "@radix-ui/themes";
import { useState, type MouseEvent } from "react";
import { useTranslation } from "react-i18next";
import type { AdminUser, UserAction } from "../../../api/users";
import { keepRowFocus } from "../../../lib/keep-focus";
import { ROLE_ADMIN, ROLE_ROOT, ROLE_USER } from "../../../lib/roles";
import { manageUser, usersDialog } from "../../../stores/users";
import { role as myRole } from "../../../stores/user";

/** refusal says why the server would refuse an action of actor on target (S §7), or null when it would take it. */
export function refusal(actor: number, target: AdminUser, action: UserAction | "edit"): string | null {
  if (actor < ROLE_ROOT && target.role >= actor) return "userAdmin.notLowerRole";
  const targetRoot = target.role >= ROLE_ROOT;
  switch (action) {
    case "promote":
      if (actor < ROLE_ROOT) return "userAdmin.rootPromotes";
      return target.role >= ROLE_ADMIN ? "userAdmin.alreadyAdmin" : null;
    case "demote":
      if (targetRoot) return "userAdmin.rootNoDemote";
      return target.role <= ROLE_USER ? "userAdmin.alreadyCommon" : null;
    case "disable":
      return targetRoot ? "userAdmin.rootNoDisable" : null;
    case "delete":
      return targetRoot ? "userAdmin.rootNoDelete" : null;
  }
  return null;
}

/**
 * UserActions are the buttons of one live account: promote, demote, delete, disable or enable, edit.
 * An action the server would refuse to the signed-in administrator is shown disabled, with the reason as its title.
 */
export function UserActions({ user }: { user: AdminUser }) {
  useSignals();
  const { t } = useTranslation();
  const [busy, setBusy] = useState<UserAction | null>(null);
  const actor = myRole.value;
  const why = (action: UserAction | "edit") => {
    const key = refusal(actor, user, action);
    return key ? t(key) : undefined;
  };
  // The button is disabled while its action runs: the keyboard comes back to it (or to its replacement, enable for disable) after.
  const run = async (e: MouseEvent<HTMLButtonElement>, action: UserAction) => {
    const control = e.currentTarget;
    if (busy !== null) return;
    setBusy(action);
    try {
      await keepRowFocus(control, manageUser(user, action));
    } finally {
      setBusy(null);
    }
  };
  const act = (action: UserAction, label: string, color?: "red" | "gray" | "orange", disabled = false) => {
    const reason = why(action);
    return (
      <Button
        size="1"
        variant="soft"
        color={color}
        loading={busy === action}
        // An explicit disabled overrides loading's: the action in flight is disabled too, so a double click sends once.
        disabled={disabled || reason !== undefined || busy !== null}
        title={reason}
        onClick={(e) => void run(e, action)}
        data-testid={`user-${action}`}
      >
        {label}
      </Button>
    );
  };
  const deleteWhy = why("delete");
  const editWhy = why("edit");
  return (
    <Flex gap="1" wrap="wrap">
      {act("promote", t("userAdmin.promote"))}
      {act("demote", t("userAdmin.demote"), "gray")}
      <Button size="1" variant="soft" color="red" disabled={deleteWhy !== undefined} title={deleteWhy} onClick={() => (usersDialog.value = { kind: "delete", user })} data-testid="user-delete">
        {t("userAdmin.delete")}
      </Button>
      {user.status === 1 ? act("disable", t("userAdmin.disable"), "orange") : act("enable", t("userAdmin.enable"), undefined, user.status === 3)}
      <Button size="1" variant="soft" color="gray" disabled={editWhy !== undefined} title={editWhy} onClick={() => (usersDialog.value = { kind: "edit", id: user.id })} data-testid="user-edit">
        {t("userAdmin.edit")}
      </Button>
    </Flex>
  );
}
