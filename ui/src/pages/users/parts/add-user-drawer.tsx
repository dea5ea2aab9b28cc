import { Flex, TextField } from "@radix-ui/themes";
import { useLayoutEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../api/client";
import { createUser } from "../../../api/users";
import { Field } from "../../../components/ui/field";
import { FormSheet } from "../../../components/ui/form-sheet";
import { toast } from "../../../stores/toast";
import { loadUsers, userSearch, usersDialog } from "../../../stores/users";
import { charCount, DISPLAY_NAME_MAX, inputMax, PASSWORD_MAX, PASSWORD_MIN, USERNAME_MAX } from "../../../lib/account-limits";

const EMPTY = { username: "", display_name: "", password: "" };

/** AddUserDrawer creates an ordinary account; username and password are required. */
export function AddUserDrawer({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const [form, setForm] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  // Before the drawer is painted: nothing typed into it can be overwritten by the reset.
  useLayoutEffect(() => {
    if (open) setForm(EMPTY);
  }, [open]);
  const submit = async () => {
    // Not again while a save is on its way (Enter pressed twice).
    if (busy) return;
    const username = form.username.trim();
    if (!username || !form.password) {
      toast.error(t("userAdmin.needUsernamePassword"));
      return;
    }
    if (charCount(form.password) < PASSWORD_MIN) {
      toast.error(t("userAdmin.passwordTooShort"));
      return;
    }
    if (charCount(form.password) > PASSWORD_MAX) {
      toast.error(t("userAdmin.passwordTooLong"));
      return;
    }
    // The drawer this save is for: a late answer leaves alone a drawer or dialog opened since.
    const mine = usersDialog.peek();
    setBusy(true);
    try {
      await createUser({ username, display_name: form.display_name.trim(), password: form.password });
      toast.success(t("userAdmin.createSuccess"));
      if (usersDialog.peek() === mine) onClose();
      // The new account is listed first among every account, so a search shown before is over, in the form too.
      userSearch.value = { keyword: "", group: "" };
      await loadUsers();
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <FormSheet
      open={open}
      onClose={onClose}
      title={t("userAdmin.addTitle")}
      testId="user-add-drawer"
      cancelLabel={t("userAdmin.cancel")}
      submitLabel={t("userAdmin.submit")}
      submitTestId="user-add-submit"
      onSubmit={() => void submit()}
      busy={busy}
    >
      <Flex direction="column" gap="3">
        <Field id="add-user-username" label={t("userAdmin.username")}>
          <TextField.Root id="add-user-username" maxLength={inputMax(USERNAME_MAX)} placeholder={t("userAdmin.usernamePlaceholder")} value={form.username} onChange={(e) => setForm({ ...form, username: e.target.value })} autoComplete="off" />
        </Field>
        <Field id="add-user-display" label={t("userAdmin.displayName")}>
          <TextField.Root id="add-user-display" maxLength={inputMax(DISPLAY_NAME_MAX)} placeholder={t("userAdmin.displayNamePlaceholder")} value={form.display_name} onChange={(e) => setForm({ ...form, display_name: e.target.value })} autoComplete="off" />
        </Field>
        <Field id="add-user-password" label={t("userAdmin.password")}>
          <TextField.Root id="add-user-password" type="password" placeholder={t("userAdmin.passwordPlaceholder")} value={form.password} onChange={(e) => setForm({ ...form, password: e.target.value })} autoComplete="new-password" />
        </Field>
      </Flex>
    </FormSheet>
  );
}
