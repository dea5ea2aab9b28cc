import { useSignals } from "@preact/signals-react/runtime";
import { Callout, Flex, Grid, Text, TextArea, TextField } from "@radix-ui/themes";
import { useLayoutEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import * as channelApi from "../../../api/channels";
import { handleError } from "../../../api/client";
import { MultiSelect } from "../../../components/multi-select";
import { Checkbox } from "../../../components/ui/checkbox";
import { Field } from "../../../components/ui/field";
import { Select } from "../../../components/ui/select";
import { FormSheet } from "../../../components/ui/form-sheet";
import { groupOptions, refreshChannels } from "../../../stores/channels";
import { toast } from "../../../stores/toast";
import {
  CHANNEL_TYPES,
  IMPLEMENTED_TYPES,
  KEY_FORMAT_TYPES,
  MODEL_MAPPING_TEMPLATE,
  STATUS_CODE_MAPPING_TEMPLATE,
  suggestedModels,
  TYPE_OPENAI,
  TYPE_VERTEX,
} from "../constants";
import { closeEditor, editorState } from "../dialogs";
import { emptyForm, formFromChannel, singleKey, toInput, validateForm, type ChannelForm, type KeyDestination } from "../form";
import type { Channel } from "../../../api/channels";
import { ModelsField } from "./models-field";
import { BaseUrlField, OtherField, TemplateLink } from "./type-fields";

/** ChannelDrawer creates or edits a channel with every field of the form and its checks. */
export function ChannelDrawer() {
  useSignals();
  const { t } = useTranslation();
  const state = editorState.value;
  const open = state !== null;
  const editId = state?.id;
  const isEdit = editId !== undefined;
  const preloaded = state?.channel;

  const [form, setForm] = useState<ChannelForm>(emptyForm);
  const [saved, setSaved] = useState<KeyDestination | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  const [busy, setBusy] = useState(false);
  const [fetching, setFetching] = useState(false);
  const [byType, setByType] = useState<Record<string, string[]>>({});
  const [allModels, setAllModels] = useState<string[]>([]);
  const submitting = useRef(false);

  const set = <K extends keyof ChannelForm>(key: K, value: ChannelForm[K]) => setForm((f) => ({ ...f, [key]: value }));

  // Before the drawer is painted: nothing typed into it can be overwritten by the reset.
  useLayoutEffect(() => {
    if (!open) return;
    let live = true;
    void Promise.all([channelApi.modelsByType().catch(() => ({})), channelApi.allModelIds().catch(() => [] as string[])]).then(([map, ids]) => {
      if (!live) return;
      setByType(map);
      setAllModels(ids);
      if (!isEdit) setForm((f) => (f.models.length === 0 ? { ...f, models: suggestedModels(f.type, map) } : f));
    });
    const fill = (c: Channel) => {
      setForm(formFromChannel(c));
      setSaved({ type: c.type, base_url: c.base_url ?? "" });
    };
    setSaved(undefined);
    if (preloaded) {
      fill(preloaded);
    } else if (isEdit) {
      setLoading(true);
      channelApi
        .getChannel(editId)
        .then((c) => live && fill(c))
        .catch((err) => {
          handleError(err);
          if (live) closeEditor();
        })
        .finally(() => live && setLoading(false));
    } else {
      setForm(emptyForm());
    }
    return () => {
      live = false;
    };
  }, [open, isEdit, editId, preloaded]);

  // Models nobody picked: none, or, on create, still the type's suggestion.
  const untouchedModels = (f: ChannelForm) => {
    const suggested = suggestedModels(f.type, byType);
    return f.models.length === 0 || (!isEdit && f.models.length === suggested.length && suggested.every((m) => f.models.includes(m)));
  };

  // A new type brings its suggested models while nobody picked the list.
  const changeType = (type: number) => {
    setForm((f) => ({ ...f, type, models: untouchedModels(f) ? suggestedModels(type, byType) : f.models }));
  };

  // The server answers a type whose provider lists no models, then a form without a key, in that order (A §5).
  const fetchModels = async () => {
    setFetching(true);
    try {
      const base = form.base_url.trim().replace(/\/+$/, "");
      // On edit without a new key the server uses the stored one, as long as the form keeps the stored type and base URL.
      const fetched = await channelApi.fetchFormModels(form.type, base, form.key, isEdit && form.key.trim() === "" ? editId : undefined);
      // A drawer closed (or opened on another channel) meanwhile does not take this channel's list.
      if (editorState.peek() !== state) return;
      // The upstream's list replaces a suggestion nobody picked; models someone chose stay.
      setForm((f) => ({ ...f, models: untouchedModels(f) ? Array.from(new Set(fetched)) : Array.from(new Set([...f.models, ...fetched])) }));
      toast.success(t("channels.msg.fetchModelsOk"));
    } catch {
      // The fetch call already showed the server's reason (reportServerError); a generic toast would repeat it.
    } finally {
      setFetching(false);
    }
  };


  const submit = async () => {
    if (submitting.current) {
      toast.error(t("channels.msg.duplicateSubmit"));
      return;
    }
    const problem = validateForm(form, isEdit, saved);
    if (problem) {
      toast.info(t(problem));
      return;
    }
    submitting.current = true;
    setBusy(true);
    try {
      const input = toInput(form, isEdit);
      if (isEdit) {
        await channelApi.updateChannel({ ...input, id: editId });
        toast.success(t("channels.msg.updated"));
      } else {
        await channelApi.createChannels(input);
        toast.success(t("channels.msg.created"));
      }
      // Closes this drawer only: one the user opened since (after closing this one) keeps what was typed.
      if (editorState.peek() === state) closeEditor();
      await refreshChannels();
    } catch (err) {
      handleError(err);
    } finally {
      submitting.current = false;
      setBusy(false);
    }
  };

  const type = form.type;
  // A Vertex key is one JSON document, whatever the batch box said before the type changed.
  const batch = form.batch && type !== TYPE_VERTEX && !isEdit;
  const keyHint = KEY_FORMAT_TYPES.has(type) ? t(`channels.keyHint.${type}`) : t("channels.keyHint.plain");

  return (
    <FormSheet
      open={open}
      onClose={closeEditor}
      title={isEdit ? t("channels.form.editTitle") : t("channels.form.createTitle")}
      side={isEdit ? "right" : "left"}
      testId="channel-drawer"
      cancelLabel={t("common.cancel")}
      submitLabel={t("channels.form.submit")}
      submitTestId="channel-submit"
      onSubmit={() => void submit()}
      busy={busy}
      submitDisabled={loading}
      loadingText={loading ? t("channels.form.loading") : undefined}
    >
      <Field id="ch-type" label={t("channels.form.type")}>
        <Select.Root value={String(type)} onValueChange={(v) => changeType(Number(v))}>
          <Select.Trigger id="ch-type" data-testid="channel-type-select" />
          <Select.Content position="popper">
            {CHANNEL_TYPES.map((ct) => (
              <Select.Item key={ct.value} value={String(ct.value)}>
                {t(`channels.type.${ct.value}`)}
              </Select.Item>
            ))}
          </Select.Content>
        </Select.Root>
      </Field>
      {!IMPLEMENTED_TYPES.has(type) ? (
        <Callout.Root color="blue" size="1">
          <Callout.Text>{t("channels.form.unimplemented")}</Callout.Text>
        </Callout.Root>
      ) : null}

      <BaseUrlField form={form} set={set} />
      <Field id="ch-name" label={t("channels.form.name")}>
        <TextField.Root
          id="ch-name"
          value={form.name}
          placeholder={t("channels.form.namePlaceholder")}
          onChange={(e) => set("name", e.target.value)}
          autoComplete="off"
          data-testid="channel-name-input"
        />
      </Field>
      <Field id="ch-groups" label={t("channels.form.group")} hint={t("channels.form.groupHint")}>
        <MultiSelect id="ch-groups" value={form.groups} options={groupOptions.value} onChange={(v) => set("groups", v)} label={t("channels.form.group")} creatable testId="channel-groups" />
      </Field>

      <OtherField form={form} set={set} />
      <ModelsField form={form} set={set} byType={byType} allModels={allModels} fetching={fetching} onFetch={() => void fetchModels()} />
      <Field id="ch-mapping" label={t("channels.form.mapping")}>
        <TextArea
          id="ch-mapping"
          rows={4}
          value={form.model_mapping}
          placeholder={`${t("channels.form.mappingPlaceholder")}\n${JSON.stringify(MODEL_MAPPING_TEMPLATE, null, 2)}`}
          onChange={(e) => set("model_mapping", e.target.value)}
          className="mono"
          data-testid="channel-mapping"
        />
        <TemplateLink onClick={() => set("model_mapping", JSON.stringify(MODEL_MAPPING_TEMPLATE, null, 2))} />
      </Field>

      <Field id="ch-key" label={type === TYPE_VERTEX ? t("channels.form.vertexKey") : t("channels.form.key")} hint={isEdit ? t("channels.form.keyEditHint") : batch ? t("channels.form.batchHint") : undefined}>
        {batch || type === TYPE_VERTEX ? (
          <TextArea
            id="ch-key"
            rows={type === TYPE_VERTEX ? 10 : 6}
            value={form.key}
            placeholder={batch ? t("channels.form.keyBatchPlaceholder") : keyHint}
            onChange={(e) => set("key", e.target.value)}
            className="mono"
            data-testid="channel-key"
          />
        ) : (
          <TextField.Root
            id="ch-key"
            type="password"
            value={form.key}
            placeholder={keyHint}
            onChange={(e) => set("key", e.target.value)}
            autoComplete="new-password"
            data-testid="channel-key"
          />
        )}
      </Field>
      {!isEdit && type !== TYPE_VERTEX ? (
        <Text as="label" size="2">
          <Flex gap="2" align="center">
            <Checkbox
              checked={form.batch}
              onCheckedChange={(v) => {
                set("batch", v === true);
                // One key: the field shows the lines joined, and that is what is sent.
                if (v !== true) set("key", singleKey(form.key));
              }}
              data-testid="channel-batch"
            />
            {t("channels.form.batch")}
          </Flex>
        </Text>
      ) : null}

      {type === TYPE_OPENAI ? (
        <Field id="ch-org" label={t("channels.form.organization")} hint={t("channels.form.organizationHint")}>
          <TextField.Root
            id="ch-org"
            value={form.openai_organization}
            placeholder={t("channels.form.organizationPlaceholder")}
            onChange={(e) => set("openai_organization", e.target.value)}
            autoComplete="off"
          />
        </Field>
      ) : null}
      <Field id="ch-test-model" label={t("channels.form.testModel")}>
        <TextField.Root id="ch-test-model" value={form.test_model} placeholder={t("channels.form.testModelPlaceholder")} onChange={(e) => set("test_model", e.target.value)} autoComplete="off" />
      </Field>
      <Text as="label" size="2">
        <Flex gap="2" align="center">
          <Checkbox checked={form.auto_ban} onCheckedChange={(v) => set("auto_ban", v === true)} data-testid="channel-auto-ban" />
          {t("channels.form.autoBan")}
        </Flex>
      </Text>
      <Field id="ch-status-mapping" label={t("channels.form.statusMapping")}>
        <TextArea
          id="ch-status-mapping"
          rows={3}
          value={form.status_code_mapping}
          placeholder={`${t("channels.form.statusMappingPlaceholder")}\n${JSON.stringify(STATUS_CODE_MAPPING_TEMPLATE, null, 2)}`}
          onChange={(e) => set("status_code_mapping", e.target.value)}
          className="mono"
        />
        <TemplateLink onClick={() => set("status_code_mapping", JSON.stringify(STATUS_CODE_MAPPING_TEMPLATE, null, 2))} />
      </Field>
      {/* Two equal columns: a hint longer than its input (in English) neither pushes the other field onto a new line nor sets the input's width. */}
      <Grid columns={{ initial: "1", xs: "2" }} gap="3">
        <Field id="ch-priority" label={t("channels.form.priority")} hint={t("channels.priorityTip")}>
          <TextField.Root id="ch-priority" type="number" min={-999} value={form.priority} onChange={(e) => set("priority", e.target.value)} />
        </Field>
        <Field id="ch-weight" label={t("channels.form.weight")} hint={t("channels.weightTip")}>
          <TextField.Root id="ch-weight" type="number" min={0} value={form.weight} onChange={(e) => set("weight", e.target.value)} />
        </Field>
      </Grid>
    </FormSheet>
  );
}
