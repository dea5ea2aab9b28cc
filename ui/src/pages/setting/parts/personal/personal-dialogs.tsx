import { useSignals } from "@preact/signals-react/runtime";
import { useTranslation } from "react-i18next";
import { wechatBind } from "../../../../api/auth";
import { WeChatCodeDialog } from "../../../../components/wechat-code-dialog";
import { toast } from "../../../../stores/toast";
import { refreshSelf } from "../../../../stores/user";
import { DeleteAccountDialog } from "./delete-account-dialog";
import { dialogProps } from "./dialogs";
import { EmailBindDialog } from "./email-bind-dialog";
import { ProfileDialog } from "./profile-dialog";
import { TransferDialog } from "./transfer-dialog";

/** PersonalDialogs mounts every dialog of the personal tab in one place. */
export function PersonalDialogs() {
  useSignals();
  const { t } = useTranslation();
  return (
    <>
      <ProfileDialog {...dialogProps("profile")} />
      <TransferDialog {...dialogProps("transfer")} />
      <EmailBindDialog {...dialogProps("email")} />
      <WeChatCodeDialog
        {...dialogProps("wechat")}
        title={t("wechat.bindTitle")}
        submitLabel={t("profile.bind")}
        onSubmit={async (code) => {
          await wechatBind(code);
          toast.success(t("wechat.bindSuccess"));
          // Done: the dialog closes whatever the refresh after it does; its failure is not the binding's.
          void refreshSelf(true).catch(() => {});
        }}
      />
      <DeleteAccountDialog {...dialogProps("delete")} />
    </>
  );
}
