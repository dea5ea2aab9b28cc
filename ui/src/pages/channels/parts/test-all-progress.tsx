import { useSignals } from "@preact/signals-react/runtime";
import { Callout, Flex, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { Progress } from "../../../components/ui/progress";
import { testAllState, updatingAllBalances } from "../../../stores/channels";

/** TestAllProgress shows the live progress of a test-all run and of a balance update of all channels. */
export function TestAllProgress() {
  useSignals();
  const { t } = useTranslation();
  const s = testAllState.value;
  const balances = updatingAllBalances.value;
  if (!s && !balances) return null;
  return (
    <Callout.Root color={s && !s.running && s.failed + s.disabled > 0 ? "orange" : "blue"} data-testid="channel-progress">
      <Flex direction="column" gap="2" className="full-width">
        {s ? (
          <>
            <Text size="2" data-testid="test-all-status">
              {s.running
                ? t("channels.progress.testing", { done: s.done, total: s.total || "?" })
                : t(s.disabled > 0 ? "channels.progress.finishedDisabled" : "channels.progress.finished", { done: s.done, total: s.total, failed: s.failed, disabled: s.disabled })}
            </Text>
            <Progress value={s.total > 0 ? Math.round((s.done / s.total) * 100) : undefined} max={100} />
          </>
        ) : null}
        {balances ? (
          <>
            <Text size="2">{t("channels.progress.balances")}</Text>
            <Progress duration="20s" />
          </>
        ) : null}
      </Flex>
    </Callout.Root>
  );
}
