import { useTranslation } from "react-i18next";
import { useLocation } from "wouter";
import { wechatLogin } from "../../../api/auth";
import { afterLoginPath } from "../../../lib/after-login";
import { WeChatCodeDialog } from "../../../components/wechat-code-dialog";
import { toast } from "../../../stores/toast";
import { startSession } from "../../../stores/user";

/** WeChatLoginDialog logs in with a code from the WeChat official account. */
export function WeChatLoginDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const { t } = useTranslation();
  const [, navigate] = useLocation();
  return (
    <WeChatCodeDialog
      open={open}
      onOpenChange={onOpenChange}
      title={t("wechat.loginTitle")}
      submitLabel={t("auth.login")}
      onSubmit={async (code) => {
        const u = await wechatLogin(code);
        startSession(u);
        toast.success(t("auth.loginSuccess"));
        // A third-party login lands on the home page (A §1), or on the page that sent the visitor here.
        navigate(afterLoginPath(u.role, "/"));
      }}
    />
  );
}
