import { useSignals } from "@preact/signals-react/runtime";
import { Card, Code, DataList, Heading, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { formatTimestamp } from "../../../components/format";
import { serverAddress, status, systemName } from "../../../stores/status";

/** DefaultHome is shown when no home page content is configured. */
export function DefaultHome() {
  useSignals();
  const { t } = useTranslation();
  const s = status.value;
  // The format every other date of the console uses, whatever the browser's locale.
  const started = formatTimestamp(s.start_time ?? 0) || "-";
  // Where OpenAI clients point.
  const apiBase = `${serverAddress.value}/v1`;
  return (
    <Card size="3">
      <Heading size="5" mb="3">
        {t("home.welcome", { name: systemName.value })}
      </Heading>
      <Text as="p" color="gray" mb="4">
        {t("home.intro")}
      </Text>
      <DataList.Root>
        <DataList.Item>
          <DataList.Label>{t("home.systemName")}</DataList.Label>
          <DataList.Value>{systemName.value}</DataList.Value>
        </DataList.Item>
        <DataList.Item>
          <DataList.Label>{t("home.version")}</DataList.Label>
          <DataList.Value>{s.version || "-"}</DataList.Value>
        </DataList.Item>
        <DataList.Item>
          <DataList.Label>{t("home.apiBase")}</DataList.Label>
          <DataList.Value>
            <Code data-testid="api-base">{apiBase}</Code>
          </DataList.Value>
        </DataList.Item>
        <DataList.Item>
          <DataList.Label>{t("home.startTime")}</DataList.Label>
          <DataList.Value>{started}</DataList.Value>
        </DataList.Item>
      </DataList.Root>
    </Card>
  );
}
