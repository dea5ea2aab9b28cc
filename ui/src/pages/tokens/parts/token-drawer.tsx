import { useSignals } from "@preact/signals-react/runtime";
import { Button, Callout, Flex, Text, TextArea, TextField } from "@radix-ui/themes";
import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../api/client";
import * as tokenApi from "../../../api/tokens";
import { MultiSelect } from "../../../components/multi-select";
import { Checkbox } from "../../../components/ui/checkbox";
import { Field } from "../../../components/ui/field";
import { Select } from "../../../components/ui/select";
import { FormSheet } from "../../../components/ui/form-sheet";
import { displayInCurrency, quotaPerUnit, renderQuota } from "../../../stores/status";
import { toast } from "../../../stores/toast";
import { COUNT_PRESETS, createTokens, QUOTA_PRESETS, saveToken } from "../../../stores/tokens";
import { closeEditor, editorState } from "../dialogs";
import { EXPIRY_CHOICES, emptyTokenForm, expiryIn, formFromToken, toTokenInput, validateTokenForm, type TokenForm } from "../form";

const USER_GROUP = "__user__";

/** TokenDrawer creates tokens (several at once when asked) or edits one. */
export function TokenDrawer() {
  useSignals();
  const { t } = useTranslation();
  const state = editorState.value;
  const open = state !== null;
  const editId = state?.id;
  const isEdit = editId !== undefined;
  const [form, setForm] = useState<TokenForm>(emptyTokenForm);
  const [loading, setLoading] = useState(false);
  const [busy, setBusy] = useState(false);
  const [models, setModels] = useState<string[]>([]);
  const [groups, setGroups] = useState<Record<string, string>>({});
  const submitting = useRef(false);
  const set = <K extends keyof TokenForm>(key: K, value: TokenForm[K]) => setForm((f) => ({ ...f, [key]: value }));

  // Before the drawer is painted: nothing typed into it can be overwritten by the reset.
  useLayoutEffect(() => {
    if (!open) return;
    let live = true;
    void tokenApi
      .selfGroups()
      .catch(() => ({}))
      .then((g) => live && setGroups(g));
    if (isEdit) {
      setLoading(true);
      tokenApi
        .getToken(editId)
        .then((tok) => live && setForm(formFromToken(tok)))
        .catch((err) => {
          handleError(err);
          if (live) closeEditor();
        })
        .finally(() => live && setLoading(false));
    } else {
      setForm(emptyTokenForm());
    }
    return () => {
      live = false;
    };
  }, [open, isEdit, editId]);

  // The models offered are those of the token's group (the account's own when none is chosen):
  // a token of another group calls that group's models, not the account's.
  const modelGroup = form.group;
  useEffect(() => {
    if (!open) return;
    let live = true;
    void tokenApi
      .userModels(modelGroup)
      .catch(() => [] as string[])
      .then((m) => live && setModels(m));
    return () => {
      live = false;
    };
  }, [open, modelGroup]);

  const submit = async () => {
    if (submitting.current) return;
    const problem = validateTokenForm(form, isEdit);
    if (problem) {
      toast.error(t(problem));
      return;
    }
    submitting.current = true;
    setBusy(true);
    try {
      const input = toTokenInput(form);
      // Closes this drawer only: one the user opened since (after closing this one) keeps what was typed.
      const closeThis = () => editorState.peek() === state && closeEditor();
      if (isEdit) {
        if (await saveToken({ ...input, id: editId })) closeThis();
      } else {
        const created = await createTokens(input, Number.parseInt(form.count, 10));
        if (created > 0) closeThis();
      }
    } finally {
      submitting.current = false;
      setBusy(false);
    }
  };

  const quotaValue = Number.parseInt(form.remain_quota, 10);
  const groupEntries = Object.entries(groups);
  if (form.group && !(form.group in groups)) groupEntries.push([form.group, ""]);

  return (
    <FormSheet
      open={open}
      onClose={closeEditor}
      title={isEdit ? t("tokens.form.editTitle") : t("tokens.form.createTitle")}
      side={isEdit ? "right" : "left"}
      testId="token-drawer"
      cancelLabel={t("common.cancel")}
      submitLabel={t("tokens.form.submit")}
      submitTestId="token-submit"
      onSubmit={() => void submit()}
      busy={busy}
      submitDisabled={loading}
      loadingText={loading ? t("tokens.form.loading") : undefined}
    >
      <Field id="tk-name" label={t("tokens.form.name")}>
        <TextField.Root
          id="tk-name"
          value={form.name}
          placeholder={t("tokens.form.namePlaceholder")}
          onChange={(e) => set("name", e.target.value)}
          autoComplete="off"
          data-testid="token-name-input"
        />
      </Field>
      <Field id="tk-expiry" label={t("tokens.form.expiry")}>
        <TextField.Root
          id="tk-expiry"
          value={form.expiry}
          placeholder={t("tokens.form.expiryPlaceholder", { example: `${new Date().getFullYear() + 1}-01-01 00:00:00` })}
          onChange={(e) => set("expiry", e.target.value)}
          autoComplete="off"
          data-testid="token-expiry"
        />
        <Flex gap="2" wrap="wrap" mt="1">
          {EXPIRY_CHOICES.map((c) => (
            <Button key={c.label} type="button" size="1" variant="soft" color="gray" onClick={() => setForm((f) => expiryIn(f, c.seconds))}>
              {t(c.label)}
            </Button>
          ))}
        </Flex>
      </Field>
      <Callout.Root color="orange" size="1">
        <Callout.Text>{t("tokens.form.quotaNote")}</Callout.Text>
      </Callout.Root>
      <Field
        id="tk-quota"
        label={t("tokens.form.quota")}
        // The amount in money; without currency display it would only repeat the number typed.
        hint={!form.unlimited_quota && displayInCurrency.value && Number.isFinite(quotaValue) ? t("tokens.form.quotaEquals", { value: renderQuota(quotaValue) }) : undefined}
      >
        <TextField.Root
          id="tk-quota"
          type="number"
          min={0}
          value={form.remain_quota}
          placeholder={t("tokens.form.quotaPlaceholder")}
          onChange={(e) => set("remain_quota", e.target.value)}
          disabled={form.unlimited_quota}
          data-testid="token-quota"
        />
        <Flex gap="2" wrap="wrap" mt="1">
          {QUOTA_PRESETS.map((q) => (
            <Button key={q} type="button" size="1" variant="soft" disabled={form.unlimited_quota} onClick={() => set("remain_quota", String(q))} data-testid="quota-preset">
              {/* Whole dollars without decimals; a preset that is not (another QuotaPerUnit) keeps its cents, not rounded to $1 or $0. */}
              {renderQuota(q, Number.isInteger(q / quotaPerUnit.value) ? 0 : 2)}
            </Button>
          ))}
        </Flex>
      </Field>
      <Flex>
        <Button
          type="button"
          variant="soft"
          color={form.unlimited_quota ? "gray" : "orange"}
          onClick={() => set("unlimited_quota", !form.unlimited_quota)}
          data-testid="token-unlimited"
          aria-pressed={form.unlimited_quota}
        >
          {form.unlimited_quota ? t("tokens.form.cancelUnlimited") : t("tokens.form.setUnlimited")}
        </Button>
      </Flex>
      {!isEdit ? (
        <Field id="tk-count" label={t("tokens.form.count")} hint={t("tokens.form.countHint")}>
          <TextField.Root
            id="tk-count"
            type="number"
            min={1}
            value={form.count}
            placeholder={t("tokens.form.countPlaceholder")}
            onChange={(e) => set("count", e.target.value)}
            data-testid="token-count"
          />
          <Flex gap="2" wrap="wrap" mt="1">
            {COUNT_PRESETS.map((n) => (
              <Button key={n} type="button" size="1" variant="soft" color="gray" onClick={() => set("count", String(n))}>
                {t("tokens.form.countN", { count: n })}
              </Button>
            ))}
          </Flex>
        </Field>
      ) : null}
      <Text as="label" size="2">
        <Flex gap="2" align="center">
          <Checkbox checked={form.model_limits_enabled} onCheckedChange={(v) => set("model_limits_enabled", v === true)} data-testid="token-limits-enabled" />
          {t("tokens.form.modelLimitsEnable")}
        </Flex>
      </Text>
      <Field
        id="tk-models"
        label={t("tokens.form.modelLimits")}
        hint={form.model_limits_enabled && form.model_limits.length === 0 ? t("tokens.form.modelLimitsEmpty") : undefined}
      >
        <MultiSelect
          id="tk-models"
          value={form.model_limits}
          options={models}
          onChange={(v) => set("model_limits", v)}
          placeholder={t("tokens.form.modelLimitsPlaceholder")}
          label={t("tokens.form.modelLimits")}
          disabled={!form.model_limits_enabled}
          testId="token-models"
        />
      </Field>
      <Field id="tk-ips" label={t("tokens.form.ipAllow")}>
        <Callout.Root color="orange" size="1">
          <Callout.Text>{t("tokens.form.ipWarning")}</Callout.Text>
        </Callout.Root>
        <TextArea id="tk-ips" rows={3} value={form.allow_ips} placeholder={t("tokens.form.ipPlaceholder")} onChange={(e) => set("allow_ips", e.target.value)} className="mono" />
      </Field>
      <Field id="tk-group" label={t("tokens.form.group")} hint={t("tokens.form.groupHint")}>
        <Select.Root value={form.group || USER_GROUP} onValueChange={(v) => set("group", v === USER_GROUP ? "" : v)}>
          <Select.Trigger id="tk-group" />
          <Select.Content position="popper">
            <Select.Item value={USER_GROUP}>{t("tokens.form.groupDefault")}</Select.Item>
            {groupEntries.map(([g, label]) => (
              <Select.Item key={g} value={g}>
                {label ? `${g}（${label}）` : g}
              </Select.Item>
            ))}
          </Select.Content>
        </Select.Root>
      </Field>
    </FormSheet>
  );
}
