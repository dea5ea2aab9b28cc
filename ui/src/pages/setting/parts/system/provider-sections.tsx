import { useSignals } from "@preact/signals-react/runtime";
import { Code, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { options } from "../../../../stores/options";
import { SpecSection } from "../option-form/spec-section";
import { stripTrailingSlashes } from "../option-form/validate";

/** publicAddress is the saved server address, or this console's origin until one is saved. */
function publicAddress(): string {
  return stripTrailingSlashes(options.value.ServerAddress ?? "") || location.origin;
}

/** SmtpSection configures outgoing mail; choosing port 465 turns SSL on. */
export function SmtpSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.smtp.${k}`);
  return (
    <SpecSection
      id="smtp"
      title={l("title")}
      description={l("description")}
      saveLabel={l("save")}
      onSet={(key, value, draft) => {
        // Port 465 is implicit TLS: SSL stays on while it is the port.
        if (key === "SMTPPort" && value.trim() === "465") draft.set("SMTPSSLEnabled", "true");
        if (key === "SMTPSSLEnabled" && value !== "true" && (draft.values.SMTPPort ?? "").trim() === "465") draft.set("SMTPSSLEnabled", "true");
      }}
      fields={[
        { key: "SMTPServer", kind: "text", label: l("SMTPServer"), placeholder: "smtp.example.com" },
        { key: "SMTPPort", kind: "number", min: 1, integer: true, label: l("SMTPPort"), hint: l("SMTPPortHint"), placeholder: "587" },
        { key: "SMTPAccount", kind: "text", label: l("SMTPAccount") },
        { key: "SMTPFrom", kind: "text", label: l("SMTPFrom") },
        { key: "SMTPToken", kind: "secret", label: l("SMTPToken") },
        { key: "SMTPSSLEnabled", kind: "switch", label: l("SMTPSSLEnabled") },
      ]}
    />
  );
}

/** GitHubSection sets the GitHub OAuth app and shows the callback URL to register there. */
export function GitHubSection() {
  useSignals();
  const { t } = useTranslation();
  const l = (k: string) => t(`options.github.${k}`);
  return (
    <SpecSection
      id="github"
      title={l("title")}
      description={l("description")}
      saveLabel={l("save")}
      fields={[
        { key: "GitHubClientId", kind: "text", label: l("GitHubClientId") },
        { key: "GitHubClientSecret", kind: "secret", label: l("GitHubClientSecret") },
      ]}
      extra={() => (
        <CallbackHint text={l("callback")} url={`${publicAddress()}/oauth/github`} testId="github-callback" />
      )}
    />
  );
}

/** LinuxDOSection sets the LinuxDO OAuth app and shows the callback URL to register there. */
export function LinuxDOSection() {
  useSignals();
  const { t } = useTranslation();
  const l = (k: string) => t(`options.linuxdo.${k}`);
  return (
    <SpecSection
      id="linuxdo"
      title={l("title")}
      description={l("description")}
      saveLabel={l("save")}
      fields={[
        { key: "LinuxDOClientId", kind: "text", label: l("LinuxDOClientId") },
        { key: "LinuxDOClientSecret", kind: "secret", label: l("LinuxDOClientSecret") },
      ]}
      extra={() => (
        <CallbackHint text={l("callback")} url={`${publicAddress()}/oauth/linuxdo`} testId="linuxdo-callback" />
      )}
    />
  );
}

/** WeChatSection connects the WeChat Server that issues login codes. */
export function WeChatSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.wechat.${k}`);
  return (
    <SpecSection
      id="wechat"
      title={l("title")}
      description={l("description")}
      saveLabel={l("save")}
      fields={[
        { key: "WeChatServerAddress", kind: "text", trimSlash: true, label: l("WeChatServerAddress"), placeholder: "https://wechat.example.com" },
        { key: "WeChatServerToken", kind: "secret", label: l("WeChatServerToken") },
        { key: "WeChatAccountQRCodeImageURL", kind: "text", label: l("WeChatAccountQRCodeImageURL") },
      ]}
    />
  );
}

/** TelegramSection sets the bot used for Telegram login. */
export function TelegramSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.telegram.${k}`);
  return (
    <SpecSection
      id="telegram"
      title={l("title")}
      description={l("description")}
      saveLabel={l("save")}
      fields={[
        { key: "TelegramBotName", kind: "text", label: l("TelegramBotName") },
        { key: "TelegramBotToken", kind: "secret", label: l("TelegramBotToken") },
      ]}
    />
  );
}

/** TurnstileSection sets the Cloudflare Turnstile keys for the human check. */
export function TurnstileSection() {
  const { t } = useTranslation();
  const l = (k: string) => t(`options.turnstile.${k}`);
  return (
    <SpecSection
      id="turnstile"
      title={l("title")}
      description={l("description")}
      saveLabel={l("save")}
      fields={[
        { key: "TurnstileSiteKey", kind: "text", label: l("TurnstileSiteKey") },
        { key: "TurnstileSecretKey", kind: "secret", label: l("TurnstileSecretKey") },
      ]}
    />
  );
}

/** CallbackHint tells which callback URL to register with a provider, in a copyable form. */
function CallbackHint({ text, url, testId }: { text: string; url: string; testId: string }) {
  return (
    <Text as="p" size="2" color="gray">
      {text} <Code className="break-all selectable" data-testid={testId}>{url}</Code>
    </Text>
  );
}
