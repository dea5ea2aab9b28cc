import { useSignals } from "@preact/signals-react/runtime";
import { Flex, Heading } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { useLocation, useSearch } from "wouter";
import { Tabs } from "../../components/ui/tabs";
import { visibleTabs } from "./tabs";

/** SettingPage shows the settings tabs the user's role allows, chosen by ?tab=. */
export default function SettingPage() {
  useSignals();
  const { t } = useTranslation();
  const [, navigate] = useLocation();
  const requested = new URLSearchParams(useSearch()).get("tab");
  const tabs = visibleTabs();
  const current = tabs.find((tab) => tab.key === requested) ?? tabs[0];
  if (!current) return null;
  return (
    <Flex direction="column" gap="4">
      <Heading size="6">{t("setting.title")}</Heading>
      <Tabs.Root value={current.key} onValueChange={(key) => navigate(`/setting?tab=${key}`, { replace: true })}>
        <Tabs.List>
          {tabs.map((tab) => (
            <Tabs.Trigger key={tab.key} value={tab.key} data-testid={`tab-${tab.key}`}>
              {t(tab.label)}
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        {tabs.map((tab) => (
          <Tabs.Content key={tab.key} value={tab.key} className="tab-content">
            {tab.key === current.key ? <tab.component /> : null}
          </Tabs.Content>
        ))}
      </Tabs.Root>
    </Flex>
  );
}
