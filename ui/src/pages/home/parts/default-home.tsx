import { useSignals } from "@preact/signals-react/runtime";
import { Card, Code, DataList, Heading, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { status, systemName } from "../../../stores/status";

/** LOCAL_DEFAULT_ADDRESS is the server address the gateway reports while none is configured. */
const LOCAL_DEFAULT_ADDRESS = "http://localhost:3000";

/** DefaultHome is shown when no home page content is configured. */
export function DefaultHome() {
  useSignals();
  const { t } = useTranslation();
  const s = status.value;
  const started = s.start_time ? new Date(s.start_time * 1000).toLocaleString() : "-";
  // Where OpenAI clients point: the configured public address (the server answers its local
  // default until one is saved), else the one this page came from.
  const configured = s.server_address && s.server_address !== LOCAL_DEFAULT_ADDRESS ? s.server_address : "";
  const apiBase = `${(configured || location.origin).replace(/\/+$/, "")}/v1`;
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
