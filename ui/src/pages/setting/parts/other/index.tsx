import { useSignals } from "@preact/signals-react/runtime";
import { Grid } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { loadOptions, optionsLoaded } from "../../../../stores/options";
import { OptionSection } from "../option-form/option-section";
import { OptionsLoading } from "../option-form/options-loading";
import { SiteTextOption } from "./site-text-option";

/** OtherTab edits the site texts (root only): notice, name, logo, home page, about and footer, each saved alone. */
export default function OtherTab() {
  useSignals();
  const { t } = useTranslation();
  const l = (k: string) => t(`options.site.${k}`);
  useEffect(() => {
    void loadOptions();
  }, []);
  if (!optionsLoaded.value) return <OptionsLoading />;
  return (
    <Grid columns="1" gap="4" data-testid="other-tab">
      <OptionSection id="notice" title={l("Notice")}>
        <SiteTextOption k="Notice" label={l("Notice")} hint={l("NoticeHint")} saveLabel={l("NoticeSave")} rows={6} />
      </OptionSection>
      <OptionSection id="site" title={l("title")}>
        <SiteTextOption k="SystemName" label={l("SystemName")} saveLabel={l("SystemNameSave")} />
        <SiteTextOption k="Logo" label={l("Logo")} saveLabel={l("LogoSave")} placeholder="https://example.com/logo.png" />
        <SiteTextOption k="HomePageContent" label={l("HomePageContent")} hint={l("HomePageContentHint")} saveLabel={l("HomePageContentSave")} rows={8} />
        <SiteTextOption k="About" label={l("About")} hint={l("AboutHint")} saveLabel={l("AboutSave")} rows={8} />
        <SiteTextOption k="Footer" label={l("Footer")} hint={l("FooterHint")} saveLabel={l("FooterSave")} rows={4} />
      </OptionSection>
    </Grid>
  );
}
