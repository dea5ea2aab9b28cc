import { Flex, Spinner, TextField } from "@radix-ui/themes";
import { useLayoutEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../api/client";
import { createRedemptions, getRedemption, updateRedemption } from "../../../api/redemptions";
import { Field } from "../../../components/ui/field";
import { FormSheet } from "../../../components/ui/form-sheet";
import { quotaWithinBound } from "../../../lib/quota";
import { loadRedemptions, redemptionKeyword, redemptionsDialog, refreshRedemptionRow } from "../../../stores/redemptions";
import { renderQuota } from "../../../stores/status";
import { toast } from "../../../stores/toast";

/** DEFAULT_REDEMPTION_QUOTA is the quota a new code starts with. */
export const DEFAULT_REDEMPTION_QUOTA = 100000;

interface Form {
  name: string;
  quota: string;
  count: string;
}

const EMPTY: Form = { name: "", quota: String(DEFAULT_REDEMPTION_QUOTA), count: "1" };

/**
 * RedemptionDrawer creates codes (name, quota, count 1-100) or edits the
 * name and quota of an unused one. After creating it offers the download.
 */
export function RedemptionDrawer({ mode, id, onClose }: { mode: "add" | "edit" | null; id: number | null; onClose: () => void }) {
  const { t } = useTranslation();
  const [form, setForm] = useState<Form | null>(null);
  const [busy, setBusy] = useState(false);
  const open = mode !== null;

  // Before the drawer is painted: nothing typed into it can be overwritten by the reset.
  useLayoutEffect(() => {
    if (mode === "add") {
      setForm(EMPTY);
      return;
    }
    if (mode !== "edit" || id === null) return;
    setForm(null);
    let live = true;
    getRedemption(id)
      .then((r) => live && setForm({ name: r.name, quota: String(r.quota), count: "1" }))
      .catch(() => live && onClose());
    return () => {
      live = false;
    };
  }, [mode, id, onClose]);

  // As the server checks: a positive whole quota, a name of at most 20 bytes.
  const quotaValid = form !== null && /^\d+$/.test(form.quota.trim()) && Number(form.quota.trim()) > 0;

  const submit = async () => {
    // Not again while a save is on its way (Enter pressed twice): the codes would be made twice.
    if (!form || busy) return;
    const name = form.name.trim();
    // An empty name on create does nothing, as the field is marked required.
    if (mode === "add" && !name) return;
    if (new TextEncoder().encode(name).length > 20) {
      toast.error(t("redemption.nameLength"));
      return;
    }
    if (!quotaValid) {
      toast.error(t("redemption.quotaInvalid"));
      return;
    }
    if (!quotaWithinBound(form.quota)) {
      toast.error(t("common.quotaTooLarge"));
      return;
    }
    const quota = Number.parseInt(form.quota, 10);
    // The drawer this save is for: a late answer leaves alone a drawer or dialog opened since.
    const mine = redemptionsDialog.peek();
    setBusy(true);
    try {
      if (mode === "edit" && id !== null) {
        await updateRedemption({ id, name, quota });
        toast.success(t("redemption.updateSuccess"));
        if (redemptionsDialog.peek() === mine) onClose();
        await refreshRedemptionRow(id);
        return;
      }
      const count = Number(form.count);
      if (!Number.isInteger(count) || count < 1 || count > 100) {
        toast.error(t("redemption.countRange"));
        return;
      }
      const keys = await createRedemptions({ name, quota, count });
      toast.success(t("redemption.createSuccess"));
      // The new codes are listed first among every code, so a search shown before is over, in the box too.
      redemptionKeyword.value = "";
      await loadRedemptions();
      // The download offer takes the place of this drawer, not of a drawer or dialog opened since (the codes are in the list).
      const now = redemptionsDialog.peek();
      if (now === mine || now === null) redemptionsDialog.value = keys.length > 0 ? { kind: "download", name, keys } : null;
    } catch (err) {
      handleError(err);
      // An edit refused because the code changed meanwhile (redeemed, disabled): its row shows what it is now.
      if (mode === "edit" && id !== null) await refreshRedemptionRow(id);
    } finally {
      setBusy(false);
    }
  };

  return (
    <FormSheet
      open={open}
      onClose={onClose}
      title={mode === "edit" ? t("redemption.editTitle") : t("redemption.createTitle")}
      testId="redemption-drawer"
      cancelLabel={t("redemption.cancel")}
      submitLabel={t("redemption.submit")}
      submitTestId="redemption-submit"
      onSubmit={() => void submit()}
      busy={busy}
      submitDisabled={!form}
    >
      {!form ? (
        <Flex justify="center" py="6">
          <Spinner />
        </Flex>
      ) : (
        <Flex direction="column" gap="3">
          <Field id="redemption-name" label={t("redemption.name")}>
            <TextField.Root id="redemption-name" required maxLength={20} placeholder={t("redemption.namePlaceholder")} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} autoComplete="off" />
          </Field>
          <Field id="redemption-quota" label={t("redemption.quota")} hint={quotaValid ? renderQuota(Number(form.quota)) : t("redemption.quotaInvalid")}>
            <TextField.Root id="redemption-quota" type="number" step={1} placeholder={t("redemption.quotaPlaceholder")} value={form.quota} onChange={(e) => setForm({ ...form, quota: e.target.value })} />
          </Field>
          {mode === "add" ? (
            <Field id="redemption-count" label={t("redemption.count")}>
              <TextField.Root id="redemption-count" type="number" min={1} max={100} step={1} placeholder={t("redemption.countPlaceholder")} value={form.count} onChange={(e) => setForm({ ...form, count: e.target.value })} />
            </Field>
          ) : null}
        </Flex>
      )}
    </FormSheet>
  );
}
