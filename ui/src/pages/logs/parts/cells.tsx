import { Avatar, Badge, Flex, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import type { LogEntry } from "../../../api/logs";
import { Tooltip } from "../../../components/ui/tooltip";
import { parseOther } from "../../../stores/logs";
import { firstTokenColor, totalTimeColor } from "../billing";
import { userInfoTarget } from "../dialogs";
import { initial } from "../../../components/format";

/** TypeBadge names a log type: top-up, consumption, admin, system (0 shows as consumption). */
export function TypeBadge({ type }: { type: number }) {
  const { t } = useTranslation();
  switch (type) {
    case 1:
      return <Badge color="cyan">{t("logs.type.topup")}</Badge>;
    case 0:
    case 2:
      return <Badge color="lime">{t("logs.type.consume")}</Badge>;
    case 3:
      return <Badge color="orange">{t("logs.type.manage")}</Badge>;
    case 4:
      return <Badge color="purple">{t("logs.type.system")}</Badge>;
    default:
      return <Badge color="gray">{t("logs.type.unknown")}</Badge>;
  }
}

/** TimingCell shows the total time, the first-token time of streams, and stream or not, coloured by latency. */
export function TimingCell({ log }: { log: LogEntry }) {
  const { t } = useTranslation();
  // A stream's first byte may come within the millisecond: 0 is a time.
  const frtMs = parseOther(log.other).frt;
  const frt = (frtMs ?? 0) / 1000;
  return (
    <Flex gap="1" wrap="wrap">
      <Badge color={totalTimeColor(log.use_time)} data-testid="use-time">
        {log.use_time} s
      </Badge>
      {log.is_stream && frtMs !== undefined && frtMs >= 0 ? (
        <Badge color={firstTokenColor(frt)} data-testid="first-token-time">
          {frt.toFixed(1)} s
        </Badge>
      ) : null}
      <Badge color={log.is_stream ? "blue" : "purple"} variant="soft">
        {log.is_stream ? t("logs.stream") : t("logs.nonStream")}
      </Badge>
    </Flex>
  );
}

/** ModelCell shows the requested model and, when the channel mapped it, the actual one on hover. */
export function ModelCell({ log }: { log: LogEntry }) {
  const { t } = useTranslation();
  const upstream = parseOther(log.other).upstream_model;
  const badge = (
    <Badge color="indigo" variant="soft" className="badge-wrap" data-testid="log-model">
      {log.model_name}
      {upstream ? " ↻" : ""}
    </Badge>
  );
  if (!upstream) return badge;
  return <Tooltip content={`${t("logs.detail.requested")}: ${log.model_name} · ${t("logs.detail.upstream")}: ${upstream}`}>{badge}</Tooltip>;
}

/**
 * UserCell shows the user and opens the user info dialog (administrators). A row of nobody's (a scheduled channel
 * test, user 0) names the system and opens nothing: there is no account to show.
 */
export function UserCell({ log }: { log: LogEntry }) {
  const name = log.username || String(log.user_id);
  const label = (
    <Flex gap="1" align="center">
      <Avatar size="1" radius="full" fallback={initial(name)} />
      <Text size="2">{name}</Text>
    </Flex>
  );
  if (!log.user_id) return <span data-testid="log-user-system">{label}</span>;
  return (
    <button type="button" className="badge-button" onClick={() => (userInfoTarget.value = { user_id: log.user_id, username: log.username })} data-testid="log-user">
      {label}
    </button>
  );
}

/** retryChain lists the channels a call went through ("3->5"), from other.admin_info.use_channel. */
export function retryChain(log: LogEntry): string {
  const used = parseOther(log.other).admin_info?.use_channel;
  if (Array.isArray(used) && used.length > 0) return used.join("->");
  return log.channel ? String(log.channel) : "";
}
