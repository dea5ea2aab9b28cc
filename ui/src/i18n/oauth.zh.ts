/**
 * oauthZh holds the Chinese text of third-party login and binding;
 * i18n/index.ts merges it into the main dictionary.
 */
const oauthZh = {
  oauth: {
    telegramBind: "绑定 Telegram",
    telegramHint: "点击下方按钮，在 Telegram 中确认后会自动回到本页。",
    telegramLoginHint: "点击下方按钮，在 Telegram 中确认后即可登录。",
    telegramBound: "Telegram 账户绑定成功！",
    bindFailed: "绑定失败：{{message}}",
  },
};

/** OAuthDictionary is the shape every language of this part provides. */
export type OAuthDictionary = typeof oauthZh;

export default oauthZh;
