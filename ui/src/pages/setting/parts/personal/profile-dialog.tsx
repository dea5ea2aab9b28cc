import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, TextField } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../../api/client";
import { updateProfile } from "../../../../api/user";
import { Dialog } from "../../../../components/ui/dialog";
import { Field } from "../../../../components/ui/field";
import { toast } from "../../../../stores/toast";
import { refreshSelf, user } from "../../../../stores/user";
import { DISPLAY_NAME_MAX, inputMax, USERNAME_MAX } from "../../../../lib/account-limits";

/** ProfileDialog edits the username and display name. */
export function ProfileDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  useSignals();
  const { t } = useTranslation();
  const [username, setUsername] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (open) {
      setUsername(user.value?.username ?? "");
      setDisplayName(user.value?.display_name ?? "");
    }
  }, [open]);
  const save = async () => {
    if (!username.trim()) {
      toast.error(t("profile.needUsername"));
      return;
    }
    setBusy(true);
    try {
      await updateProfile({ username: username.trim(), display_name: displayName.trim() });
      toast.success(t("profile.updated"));
      onOpenChange(false);
      // Done: the dialog closes whatever the refresh after it does; its failure is not the save's.
      void refreshSelf(true).catch(() => {});
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title={t("profile.edit")}
      footer={
        <>
          <Button variant="soft" color="gray" onClick={() => onOpenChange(false)}>
            {t("common.cancel")}
          </Button>
          <Button loading={busy} onClick={save} data-testid="save-profile">
            {t("common.save")}
          </Button>
        </>
      }
    >
      <Flex direction="column" gap="3">
        <Field id="profile-username" label={t("auth.username")}>
          <TextField.Root id="profile-username" maxLength={inputMax(USERNAME_MAX)} value={username} onChange={(e) => setUsername(e.target.value)} />
        </Field>
        <Field id="profile-display-name" label={t("profile.displayName")}>
          <TextField.Root id="profile-display-name" maxLength={inputMax(DISPLAY_NAME_MAX)} value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
        </Field>
      </Flex>
    </Dialog>
  );
}
