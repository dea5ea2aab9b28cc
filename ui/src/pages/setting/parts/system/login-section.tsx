import { useTranslation } from "react-i18next";
import { LiveSwitch } from "../option-form/option-fields";
import { FieldGrid, OptionSection } from "../option-form/option-section";
import { showDialog } from "./dialogs";

const KEYS = [
  "PasswordRegisterEnabled",
  "EmailVerificationEnabled",
  "RegisterEnabled",
  "GitHubOAuthEnabled",
  "LinuxDOOAuthEnabled",
  "WeChatAuthEnabled",
  "TelegramOAuthEnabled",
  "TurnstileCheckEnabled",
];

/** LoginSection switches login and registration methods; each switch saves at once, and turning password login off asks first. */
export function LoginSection() {
  const { t } = useTranslation();
  return (
    <OptionSection id="login" title={t("options.login.title")}>
      <FieldGrid>
        <LiveSwitch k="PasswordLoginEnabled" label={t("options.login.PasswordLoginEnabled")} onTurnOff={() => showDialog("disablePasswordLogin")} />
        {KEYS.map((k) => (
          <LiveSwitch key={k} k={k} label={t(`options.login.${k}`)} />
        ))}
      </FieldGrid>
    </OptionSection>
  );
}
