import { Button, Callout, TextArea, TextField } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { Field } from "../../../components/ui/field";
import { TYPE_AIPROXY_KB, TYPE_AZURE, TYPE_CLOUDFLARE, TYPE_CUSTOM, TYPE_FASTGPT, TYPE_SPARK, TYPE_SUNO, TYPE_VERTEX, VERTEX_REGION_TEMPLATE } from "../constants";
import type { ChannelForm } from "../form";

/** SetField changes one field of the channel form. */
export type SetField = <K extends keyof ChannelForm>(key: K, value: ChannelForm[K]) => void;

/** TemplateLink fills a field with its template. */
export function TemplateLink({ onClick }: { onClick: () => void }) {
  const { t } = useTranslation();
  return (
    <Button type="button" variant="ghost" size="1" onClick={onClick} className="self-start">
      {t("channels.form.fillTemplate")}
    </Button>
  );
}

/** BaseUrlField is the address field, labelled and explained per type (Azure endpoint and API version, custom full URL, FastGPT, Suno, or an optional proxy). */
export function BaseUrlField({ form, set }: { form: ChannelForm; set: SetField }) {
  const { t } = useTranslation();
  const type = form.type;
  return (
    <>
      {type === TYPE_AZURE ? (
        <>
          <Callout.Root color="orange" size="1">
            <Callout.Text>{t("channels.form.azureWarning")}</Callout.Text>
          </Callout.Root>
          <Field id="ch-base" label={t("channels.form.azureEndpoint")}>
            <TextField.Root id="ch-base" value={form.base_url} placeholder={t("channels.form.azurePlaceholder")} onChange={(e) => set("base_url", e.target.value)} autoComplete="off" />
          </Field>
          <Field id="ch-other" label={t("channels.form.apiVersion")}>
            <TextField.Root id="ch-other" value={form.other} placeholder={t("channels.form.apiVersionPlaceholder")} onChange={(e) => set("other", e.target.value)} autoComplete="off" />
          </Field>
        </>
      ) : null}
      {type === TYPE_CUSTOM ? (
        <>
          <Callout.Root color="orange" size="1">
            <Callout.Text>{t("channels.form.customWarning")}</Callout.Text>
          </Callout.Root>
          <Field id="ch-base" label={t("channels.form.customBaseURL")}>
            <TextField.Root id="ch-base" value={form.base_url} placeholder={t("channels.form.customPlaceholder")} onChange={(e) => set("base_url", e.target.value)} autoComplete="off" />
          </Field>
        </>
      ) : null}
      {type === TYPE_FASTGPT ? (
        <Field id="ch-base" label={t("channels.form.fastgptURL")}>
          <TextField.Root id="ch-base" value={form.base_url} placeholder={t("channels.form.fastgptPlaceholder")} onChange={(e) => set("base_url", e.target.value)} autoComplete="off" />
        </Field>
      ) : null}
      {type === TYPE_SUNO ? (
        <Field id="ch-base" label={t("channels.form.sunoURL")}>
          <TextField.Root id="ch-base" value={form.base_url} placeholder={t("channels.form.sunoPlaceholder")} onChange={(e) => set("base_url", e.target.value)} autoComplete="off" />
        </Field>
      ) : null}
      {type !== TYPE_AZURE && type !== TYPE_CUSTOM && type !== TYPE_FASTGPT && type !== TYPE_SUNO ? (
        <Field id="ch-base" label={t("channels.form.proxy")}>
          <TextField.Root
            id="ch-base"
            value={form.base_url}
            placeholder={t("channels.form.proxyPlaceholder")}
            onChange={(e) => set("base_url", e.target.value)}
            autoComplete="off"
            data-testid="channel-base-url"
          />
        </Field>
      ) : null}

    </>
  );
}

/** OtherField is the type-specific extra setting: Spark version, Vertex region (with template), knowledge base id or Cloudflare account id. */
export function OtherField({ form, set }: { form: ChannelForm; set: SetField }) {
  const { t } = useTranslation();
  const type = form.type;
  return (
    <>
      {type === TYPE_SPARK ? (
        <Field id="ch-other" label={t("channels.form.sparkVersion")}>
          <TextField.Root id="ch-other" value={form.other} placeholder={t("channels.form.sparkPlaceholder")} onChange={(e) => set("other", e.target.value)} autoComplete="off" />
        </Field>
      ) : null}
      {type === TYPE_VERTEX ? (
        <Field id="ch-other" label={t("channels.form.vertexRegion")}>
          <TextArea id="ch-other" rows={5} value={form.other} placeholder={t("channels.form.vertexRegionPlaceholder")} onChange={(e) => set("other", e.target.value)} />
          <TemplateLink onClick={() => set("other", JSON.stringify(VERTEX_REGION_TEMPLATE, null, 2))} />
        </Field>
      ) : null}
      {type === TYPE_AIPROXY_KB ? (
        <Field id="ch-other" label={t("channels.form.knowledgeId")}>
          <TextField.Root id="ch-other" value={form.other} placeholder={t("channels.form.knowledgePlaceholder")} onChange={(e) => set("other", e.target.value)} autoComplete="off" />
        </Field>
      ) : null}
      {type === TYPE_CLOUDFLARE ? (
        <Field id="ch-other" label={t("channels.form.cfAccount")}>
          <TextField.Root id="ch-other" value={form.other} placeholder={t("channels.form.cfPlaceholder")} onChange={(e) => set("other", e.target.value)} autoComplete="off" />
        </Field>
      ) : null}

    </>
  );
}
