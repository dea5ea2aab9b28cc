import { Badge, Flex, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import type { Channel } from "../../../api/channels";
import { formatTimestamp } from "../../../components/format";
import { Tooltip } from "../../../components/ui/tooltip";
import { serverText } from "../../../i18n/server";
import { CHANNEL_AUTO_DISABLED, CHANNEL_ENABLED, CHANNEL_MANUALLY_DISABLED, refreshBalance, splitList } from "../../../stores/channels";
import { renderQuota } from "../../../stores/status";
import { BALANCE_TYPES, responseTimeColor, typeColor, typeNameKey } from "../constants";

/** TypeBadge names a channel's provider type. */
export function TypeBadge({ type }: { type: number }) {
  const { t } = useTranslation();
  return (
    <Badge color={typeColor(type)} variant="soft" data-testid="channel-type">
      {t(typeNameKey(type))}
    </Badge>
  );
}

/** GroupBadges lists a channel's groups. */
export function GroupBadges({ group }: { group: string }) {
  return (
    <Flex gap="1" wrap="wrap">
      {splitList(group).map((g) => (
        <Badge key={g} color="indigo" variant="outline">
          {g}
        </Badge>
      ))}
    </Flex>
  );
}

function statusInfo(otherInfo: string): { reason: string; time: number } {
  try {
    const v = JSON.parse(otherInfo || "{}") as { status_reason?: unknown; status_time?: unknown };
    return { reason: typeof v.status_reason === "string" ? v.status_reason : "", time: Number(v.status_time) || 0 };
  } catch {
    return { reason: "", time: 0 };
  }
}

/** StatusBadge shows enabled, manually disabled or automatically disabled (with the reason and time). */
export function StatusBadge({ channel }: { channel: Channel }) {
  const { t } = useTranslation();
  switch (channel.status) {
    case CHANNEL_ENABLED:
      return (
        <Badge color="green" data-testid="channel-status" data-status={channel.status}>
          {t("channels.status.enabled")}
        </Badge>
      );
    case CHANNEL_MANUALLY_DISABLED:
      return (
        <Tooltip content={t("channels.status.manual")}>
          <Badge color="red" data-testid="channel-status" data-status={channel.status}>
            {t("channels.status.disabled")}
          </Badge>
        </Tooltip>
      );
    case CHANNEL_AUTO_DISABLED: {
      const info = statusInfo(channel.other_info);
      return (
        <Tooltip
          content={
            <span>
              {t("channels.status.auto")}
              {info.reason ? (
                <>
                  <br />
                  {t("channels.status.reason", { reason: serverText(info.reason) })}
                </>
              ) : null}
              {info.time ? (
                <>
                  <br />
                  {t("channels.status.time", { time: formatTimestamp(info.time) })}
                </>
              ) : null}
            </span>
          }
        >
          <Badge color="yellow" data-testid="channel-status" data-status={channel.status}>
            {t("channels.status.disabled")}
          </Badge>
        </Tooltip>
      );
    }
    default:
      return (
        <Badge color="gray" data-testid="channel-status" data-status={channel.status}>
          {t("channels.status.unknown")}
        </Badge>
      );
  }
}

/** ResponseTime shows the last test's latency coloured by speed, or 未测试. */
export function ResponseTime({ channel }: { channel: Channel }) {
  const { t } = useTranslation();
  const ms = channel.response_time;
  const badge = (
    <Badge color={responseTimeColor(ms)} data-testid="response-time" data-ms={ms}>
      {ms ? t("channels.rt.seconds", { seconds: (ms / 1000).toFixed(2) }) : t("channels.rt.untested")}
    </Badge>
  );
  if (!channel.test_time) return badge;
  return <Tooltip content={t("channels.rt.testedAt", { time: formatTimestamp(channel.test_time) })}>{badge}</Tooltip>;
}

/** UsageCell shows the quota used through the channel and its balance; clicking the balance updates it. */
export function UsageCell({ channel }: { channel: Channel }) {
  const { t } = useTranslation();
  const supported = BALANCE_TYPES.has(channel.type);
  const balanceText = supported ? `$${(channel.balance ?? 0).toFixed(2)}` : t("channels.unsupported");
  const tip = channel.balance_updated_time
    ? `${t("channels.balanceTip")} · ${t("channels.balanceUpdatedAt", { time: formatTimestamp(channel.balance_updated_time) })}`
    : t("channels.balanceTip");
  return (
    <Flex gap="1" wrap="wrap" align="center">
      <Tooltip content={t("channels.usedQuota")}>
        <Badge color="gray" variant="outline">
          {renderQuota(channel.used_quota ?? 0)}
        </Badge>
      </Tooltip>
      <Tooltip content={tip}>
        <button type="button" className="badge-button" onClick={() => void refreshBalance(channel)} data-testid="channel-balance">
          <Badge color={supported ? "blue" : "gray"} variant="outline">
            <Text>{balanceText}</Text>
          </Badge>
        </button>
      </Tooltip>
    </Flex>
  );
}
