import type { OAuthDictionary } from "./oauth.zh";

/** oauthEn holds the English text described in oauth.zh.ts. */
const oauthEn: OAuthDictionary = {
  oauth: {
    telegramBind: "Bind Telegram",
    telegramHint: "Press the button below and confirm in Telegram; you will come back to this page.",
    telegramLoginHint: "Press the button below and confirm in Telegram to log in.",
    telegramBound: "Telegram account bound!",
    bindFailed: "Binding failed: {{message}}",
  },
};

export default oauthEn;
