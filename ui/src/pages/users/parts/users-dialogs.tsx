import { useSignals } from "@preact/signals-react/runtime";
import { useTranslation } from "react-i18next";
import { navigate } from "wouter/use-browser-location";
import { ConfirmDialog } from "../../../components/confirm-dialog";
import { useBusyFor } from "../../../lib/busy-for";
import { manageUser, usersDialog } from "../../../stores/users";
import { AddUserDrawer } from "./add-user-drawer";
import { EditUserDrawer } from "./edit-user-drawer";

/** USER_EDIT_PATH is the user list with one user's edit drawer open. */
export const USER_EDIT_PATH = "/user/edit/:id";

function close(): void {
  usersDialog.value = null;
  // A drawer opened by its address closes back to the list's.
  if (window.location.pathname.startsWith("/user/edit/")) navigate("/user", { replace: true });
}

/** UsersDialogs mounts every drawer and dialog of the users page, keyed by the row they act on. */
export function UsersDialogs() {
  useSignals();
  const { t } = useTranslation();
  const d = usersDialog.value;
  const [isBusy, run] = useBusyFor<typeof d>();
  return (
    <>
      <AddUserDrawer open={d?.kind === "add"} onClose={close} />
      <EditUserDrawer key={d?.kind === "edit" ? d.id : "none"} id={d?.kind === "edit" ? d.id : null} onClose={close} />
      <ConfirmDialog
        open={d?.kind === "delete"}
        onOpenChange={(open) => !open && close()}
        title={t("userAdmin.deleteTitle")}
        description={t("userAdmin.deleteHint")}
        confirmLabel={t("userAdmin.delete")}
        destructive
        busy={isBusy(d)}
        onConfirm={() => {
          if (d?.kind !== "delete") return;
          void run(d, async () => {
            // The confirmation of another user, opened since this one was dismissed, stays open.
            if ((await manageUser(d.user, "delete")) && usersDialog.peek() === d) close();
          });
        }}
      />
    </>
  );
}
