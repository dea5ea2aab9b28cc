import { useSignals } from "@preact/signals-react/runtime";
import { Button, Callout, DataList, Flex, Spinner } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../../../api/client";
import { getUserInfo } from "../../../api/logs";
import type { User } from "../../../api/types";
import { Dialog } from "../../../components/ui/dialog";
import { renderNumber } from "../../../lib/quota";
import { renderQuota } from "../../../stores/status";
import { userInfoTarget } from "../dialogs";

/** UserInfoDialog shows a user's balance, usage and requests; without the user call it shows what the log row has. */
export function UserInfoDialog() {
  useSignals();
  const { t } = useTranslation();
  const target = userInfoTarget.value;
  const [info, setInfo] = useState<User | null>(null);
  const [loading, setLoading] = useState(false);
  const [partial, setPartial] = useState(false);
  useEffect(() => {
    if (!target) return;
    let live = true;
    setInfo(null);
    setPartial(false);
    setLoading(true);
    getUserInfo(target.user_id)
      .then((u) => {
        if (!live) return;
        setInfo(u);
        setPartial(u === null);
      })
      .catch((err) => {
        handleError(err);
        if (live) setPartial(true);
      })
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [target]);
  const close = () => (userInfoTarget.value = null);
  return (
    <Dialog
      open={target !== null}
      onOpenChange={(o) => {
        if (!o) close();
      }}
      title={t("logs.user.title")}
      footer={<Button onClick={close}>{t("common.close")}</Button>}
    >
      {loading ? (
        <Flex justify="center" py="3">
          <Spinner />
        </Flex>
      ) : (
        <Flex direction="column" gap="3" data-testid="user-info">
          {partial ? (
            <Callout.Root color="gray" size="1">
              <Callout.Text>{t("logs.user.partial")}</Callout.Text>
            </Callout.Root>
          ) : null}
          <DataList.Root size="2">
            <DataList.Item>
              <DataList.Label>{t("logs.user.username")}</DataList.Label>
              <DataList.Value>{info?.username ?? target?.username ?? ""}</DataList.Value>
            </DataList.Item>
            <DataList.Item>
              <DataList.Label>{t("logs.user.id")}</DataList.Label>
              <DataList.Value>{info?.id ?? target?.user_id ?? ""}</DataList.Value>
            </DataList.Item>
            {info ? (
              <>
                <DataList.Item>
                  <DataList.Label>{t("logs.user.balance")}</DataList.Label>
                  <DataList.Value>{renderQuota(info.quota ?? 0)}</DataList.Value>
                </DataList.Item>
                <DataList.Item>
                  <DataList.Label>{t("logs.user.used")}</DataList.Label>
                  <DataList.Value>{renderQuota(info.used_quota ?? 0)}</DataList.Value>
                </DataList.Item>
                <DataList.Item>
                  <DataList.Label>{t("logs.user.requests")}</DataList.Label>
                  <DataList.Value>{renderNumber(info.request_count ?? 0)}</DataList.Value>
                </DataList.Item>
                {info.group ? (
                  <DataList.Item>
                    <DataList.Label>{t("logs.user.group")}</DataList.Label>
                    <DataList.Value>{info.group}</DataList.Value>
                  </DataList.Item>
                ) : null}
              </>
            ) : null}
          </DataList.Root>
        </Flex>
      )}
    </Dialog>
  );
}
