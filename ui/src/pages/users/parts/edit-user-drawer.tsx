import { useSignals } from "@preact/signals-react/runtime";
import { Flex, Spinner, Text, TextField } from "@radix-ui/themes";
import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../api/client";
import { getUser, updateUser, type AdminUser, type UserUpdate } from "../../../api/users";
import { Field } from "../../../components/ui/field";
import { Select } from "../../../components/ui/select";
import { FormSheet } from "../../../components/ui/form-sheet";
import { quotaWithinBound } from "../../../lib/quota";
import { renderQuota } from "../../../stores/status";
import { toast } from "../../../stores/toast";
import { role as myRole, user as me } from "../../../stores/user";
import { groups, isDeleted, refreshUserRow } from "../../../stores/users";
import { refusal } from "./user-actions";
import { AddQuotaPopover } from "./add-quota-popover";
import { charCount, DISPLAY_NAME_MAX, inputMax, PASSWORD_MAX, PASSWORD_MIN, USERNAME_MAX } from "../../../lib/account-limits";

interface Form {
  username: string;
  display_name: string;
  password: string;
  group: string;
  quota: string;
}

function ReadOnly({ id, label, value }: { id: string; label: string; value: string }) {
  const { t } = useTranslation();
  return (
    <Field id={id} label={label}>
      <TextField.Root id={id} readOnly value={value || t("userAdmin.none")} />
    </Field>
  );
}

/** EditUserDrawer edits another account: names, password, group and quota (with an add-quota popover). */
export function EditUserDrawer({ id, onClose }: { id: number | null; onClose: () => void }) {
  useSignals();
  const { t } = useTranslation();
  const [user, setUser] = useState<AdminUser | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  // What the add-quota button added to the loaded quota.
  const [added, setAdded] = useState(0);
  const [busy, setBusy] = useState(false);
  // mounted is false once this drawer was closed (another user's drawer is keyed anew).
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  useEffect(() => {
    if (id === null) return;
    let live = true;
    getUser(id)
      .then((u) => {
        if (!live) return;
        // Opened by its address: an account whose row offers no edit is not edited here either.
        const refused = isDeleted(u) ? "userAdmin.editDeleted" : refusal(myRole.peek(), u, "edit");
        if (refused) {
          toast.error(t(refused));
          onClose();
          return;
        }
        setUser(u);
        setAdded(0);
        setForm({ username: u.username, display_name: u.display_name ?? "", password: "", group: u.group || "default", quota: String(u.quota ?? 0) });
      })
      .catch(() => live && onClose());
    return () => {
      live = false;
    };
  }, [id, onClose, t]);

  const quota = form ? Number(form.quota) : 0;
  const quotaValid = form !== null && /^-?\d+$/.test(form.quota.trim());
  // One's own password is changed in the personal settings, which ask for the current one; the server refuses it here.
  const own = user !== null && user.id === me.value?.id;
  const groupChoices = form && form.group && !groups.value.includes(form.group) ? [form.group, ...groups.value] : groups.value;

  const submit = async () => {
    // Not again while a save is on its way (Enter pressed twice): an addition would be made twice.
    if (!form || id === null || busy) return;
    if (!quotaValid) {
      toast.error(t("userAdmin.quotaInvalid"));
      return;
    }
    if (!quotaWithinBound(form.quota)) {
      toast.error(t(form.quota.trim().startsWith("-") ? "common.quotaTooSmall" : "common.quotaTooLarge"));
      return;
    }
    if (form.password && charCount(form.password) < PASSWORD_MIN) {
      toast.error(t("userAdmin.passwordTooShort"));
      return;
    }
    if (charCount(form.password) > PASSWORD_MAX) {
      toast.error(t("userAdmin.passwordTooLong"));
      return;
    }
    const update: UserUpdate = {
      id,
      username: form.username.trim(),
      // An emptied display name falls back to the username, as on registration.
      display_name: form.display_name.trim() || form.username.trim(),
      group: form.group,
    };
    // The quota is sent only when the administrator changed it, so saving other fields
    // never undoes a top-up or charge made meanwhile. What the add-quota button did is
    // sent as an addition, applied to the balance as it is then; a typed value is a set.
    const loaded = user?.quota ?? 0;
    const newQuota = Number.parseInt(form.quota, 10);
    if (added !== 0 && newQuota === loaded + added) update.add_quota = added;
    else if (newQuota !== loaded) update.quota = newQuota;
    if (form.password) update.password = form.password;
    setBusy(true);
    try {
      await updateUser(update);
      toast.success(t("userAdmin.updateSuccess"));
      // Closes this drawer only: one the user opened since keeps what was typed.
      if (mounted.current) onClose();
      await refreshUserRow(id);
    } catch (err) {
      handleError(err);
      // Refused because the account changed meanwhile (deleted, promoted): its row shows what it is now.
      await refreshUserRow(id);
    } finally {
      setBusy(false);
    }
  };

  return (
    <FormSheet
      open={id !== null}
      onClose={onClose}
      title={t("userAdmin.editTitle")}
      testId="user-edit-drawer"
      cancelLabel={t("userAdmin.cancel")}
      submitLabel={t("userAdmin.submit")}
      submitTestId="user-edit-submit"
      onSubmit={() => void submit()}
      busy={busy}
      submitDisabled={!form}
    >
      {!form || !user ? (
        <Flex justify="center" py="6" gap="2" align="center">
          <Spinner />
          <Text color="gray">{t("userAdmin.loading")}</Text>
        </Flex>
      ) : (
        <Flex direction="column" gap="3">
          <Field id="edit-user-username" label={t("userAdmin.username")}>
            <TextField.Root id="edit-user-username" maxLength={inputMax(USERNAME_MAX)} placeholder={t("userAdmin.usernamePlaceholder")} value={form.username} onChange={(e) => setForm({ ...form, username: e.target.value })} autoComplete="off" />
          </Field>
          <Field id="edit-user-password" label={t("userAdmin.password")}>
            <TextField.Root
              id="edit-user-password"
              type="password"
              disabled={own}
              placeholder={t(own ? "userAdmin.ownPasswordHint" : "userAdmin.newPasswordPlaceholder")}
              value={form.password}
              onChange={(e) => setForm({ ...form, password: e.target.value })}
              autoComplete="new-password"
            />
          </Field>
          <Field id="edit-user-display" label={t("userAdmin.displayName")}>
            <TextField.Root id="edit-user-display" maxLength={inputMax(DISPLAY_NAME_MAX)} placeholder={t("userAdmin.displayNamePlaceholder")} value={form.display_name} onChange={(e) => setForm({ ...form, display_name: e.target.value })} autoComplete="off" />
          </Field>
          <Field id="edit-user-group" label={t("userAdmin.group")}>
            <Select.Root value={form.group} onValueChange={(g) => setForm({ ...form, group: g })}>
              <Select.Trigger id="edit-user-group" placeholder={t("userAdmin.groupSelect")} data-testid="edit-user-group" />
              <Select.Content position="popper">
                {groupChoices.map((g) => (
                  <Select.Item key={g} value={g}>
                    {g}
                  </Select.Item>
                ))}
              </Select.Content>
            </Select.Root>
          </Field>
          <Field id="edit-user-quota" label={t("userAdmin.quota")} hint={quotaValid ? renderQuota(quota) : t("userAdmin.quotaInvalid")}>
            <Flex gap="2">
              <TextField.Root
                id="edit-user-quota"
                className="grow"
                type="number"
                step={1}
                placeholder={t("userAdmin.quotaPlaceholder")}
                value={form.quota}
                onChange={(e) => setForm({ ...form, quota: e.target.value })}
              />
              <AddQuotaPopover
                quota={quotaValid ? quota : 0}
                onApply={(next) => {
                  // An addition to the loaded quota; once the field was typed over, the whole is a set.
                  setAdded(quotaValid && quota === (user?.quota ?? 0) + added ? added + next - quota : 0);
                  setForm({ ...form, quota: String(next) });
                }}
              />
            </Flex>
          </Field>
          <Text size="2" weight="bold" mt="2">
            {t("userAdmin.bindings")}
          </Text>
          <Text size="1" color="gray">
            {t("userAdmin.bindingsHint")}
          </Text>
          <ReadOnly id="edit-user-github" label={t("userAdmin.github")} value={user.github_id ?? ""} />
          <ReadOnly id="edit-user-wechat" label={t("userAdmin.wechat")} value={user.wechat_id ?? ""} />
          <ReadOnly id="edit-user-telegram" label={t("userAdmin.telegram")} value={user.telegram_id ?? ""} />
          <ReadOnly id="edit-user-linuxdo" label={t("userAdmin.linuxdo")} value={user.linux_do_id ?? ""} />
          <ReadOnly id="edit-user-email" label={t("userAdmin.email")} value={user.email ?? ""} />
        </Flex>
      )}
    </FormSheet>
  );
}
