import { useSignals } from "@preact/signals-react/runtime";
import { Badge, Flex, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import type { AdminUser } from "../../../api/users";
import { DataTable, type Column } from "../../../components/data-table";
import { Tooltip } from "../../../components/ui/tooltip";
import { roleLabelKey } from "../../../lib/roles";
import { renderQuota } from "../../../stores/status";
import { isDeleted, usersList } from "../../../stores/users";
import { UserActions } from "./user-actions";

function StatusBadge({ user }: { user: AdminUser }) {
  const { t } = useTranslation();
  if (isDeleted(user)) return <Badge color="gray">{t("userAdmin.statusDeleted")}</Badge>;
  if (user.status === 1) return <Badge color="green">{t("userAdmin.statusActive")}</Badge>;
  if (user.status === 2) return <Badge color="red">{t("userAdmin.statusBanned")}</Badge>;
  return <Badge color="gray">{t("userAdmin.statusUnknown")}</Badge>;
}

function Stat({ label, value, color, testId }: { label: string; value: string; color: "green" | "blue" | "gray"; testId: string }) {
  return (
    <Tooltip content={label}>
      <Badge color={color} variant="soft" data-testid={testId}>
        {value}
      </Badge>
    </Tooltip>
  );
}

/** UsersTable lists the current page of accounts. */
export function UsersTable() {
  useSignals();
  const { t } = useTranslation();
  const columns: Column<AdminUser>[] = [
    { key: "id", header: t("userAdmin.colId"), cell: (u) => u.id, width: "64px" },
    {
      key: "username",
      header: t("userAdmin.colUsername"),
      cell: (u) => (
        <Flex direction="column">
          <Text weight="medium" data-testid="user-username">
            {u.username}
          </Text>
          {u.display_name && u.display_name !== u.username ? (
            <Text size="1" color="gray">
              {u.display_name}
            </Text>
          ) : null}
        </Flex>
      ),
    },
    { key: "group", header: t("userAdmin.colGroup"), cell: (u) => <Badge variant="outline">{u.group || "default"}</Badge> },
    {
      key: "stats",
      header: t("userAdmin.colStats"),
      cell: (u) => (
        <Flex gap="1" wrap="wrap">
          <Stat label={t("userAdmin.remaining")} value={renderQuota(u.quota ?? 0)} color="green" testId="user-quota" />
          <Stat label={t("userAdmin.used")} value={renderQuota(u.used_quota ?? 0)} color="blue" testId="user-used-quota" />
          <Stat label={t("userAdmin.requests")} value={String(u.request_count ?? 0)} color="gray" testId="user-requests" />
        </Flex>
      ),
    },
    {
      key: "invite",
      header: t("userAdmin.colInvite"),
      cell: (u) => (
        <Flex gap="1" wrap="wrap">
          <Stat label={t("userAdmin.affCount")} value={String(u.aff_count ?? 0)} color="gray" testId="user-aff-count" />
          <Stat label={t("userAdmin.affHistory")} value={renderQuota(u.aff_history_quota ?? 0)} color="gray" testId="user-aff-history" />
          {u.inviter_id ? (
            <Stat label={t("userAdmin.inviter")} value={String(u.inviter_id)} color="gray" testId="user-inviter" />
          ) : (
            <Badge color="gray" variant="outline">
              {t("userAdmin.noInviter")}
            </Badge>
          )}
        </Flex>
      ),
    },
    { key: "role", header: t("userAdmin.colRole"), cell: (u) => <Text data-testid="user-role">{t(roleLabelKey(u.role))}</Text> },
    { key: "status", header: t("userAdmin.colStatus"), cell: (u) => <StatusBadge user={u} /> },
    { key: "actions", header: t("userAdmin.colActions"), cell: (u) => (isDeleted(u) ? null : <UserActions user={u} />) },
  ];
  return (
    <DataTable
      rows={usersList.visible.value}
      columns={columns}
      rowKey={(u) => u.id}
      loading={usersList.loading.value}
      testId="users-table"
      rowTestId={(u) => `user-row-${u.id}`}
      muted={isDeleted}
    />
  );
}
