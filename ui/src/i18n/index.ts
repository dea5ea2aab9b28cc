import i18n from "i18next";
import { initReactI18next } from "react-i18next";
import { readString, writeString } from "../lib/storage";
import zh from "./zh";
import en from "./en";
import optionsZh from "./options.zh";
import optionsEn from "./options.en";
import pagesZh from "./pages.zh";
import pagesEn from "./pages.en";
import moneyZh from "./money.zh";
import moneyEn from "./money.en";
import oauthZh from "./oauth.zh";
import oauthEn from "./oauth.en";

/** LANGUAGES lists the supported interface languages; the first is the default. */
export const LANGUAGES = ["zh", "en"] as const;
/** Language is one supported interface language. */
export type Language = (typeof LANGUAGES)[number];

/** LANGUAGE_KEY is the localStorage key holding the chosen language. */
export const LANGUAGE_KEY = "i18nextLng";

/** languageOf maps a language tag (a stored choice, a browser preference) to a supported language, or null. */
function languageOf(tag: string | null | undefined): Language | null {
  const t = (tag ?? "").toLowerCase();
  if (t.startsWith("en")) return "en";
  if (t.startsWith("zh")) return "zh";
  return null;
}

/** initialLanguage is the language chosen in this browser before, else the first supported one the browser prefers, else Chinese. */
function initialLanguage(): Language {
  const stored = readString(LANGUAGE_KEY);
  if (stored) return languageOf(stored) ?? "zh";
  const preferred = navigator.languages?.length ? navigator.languages : [navigator.language];
  for (const tag of preferred) {
    const lang = languageOf(tag);
    if (lang) return lang;
  }
  return "zh";
}

void i18n.use(initReactI18next).init({
  resources: { zh: { translation: { ...zh, ...optionsZh, ...pagesZh, ...moneyZh, ...oauthZh } }, en: { translation: { ...en, ...optionsEn, ...pagesEn, ...moneyEn, ...oauthEn } } },
  lng: initialLanguage(),
  fallbackLng: "zh",
  interpolation: { escapeValue: false },
  returnNull: false,
});

i18n.on("languageChanged", (lng) => {
  writeString(LANGUAGE_KEY, lng);
  document.documentElement.lang = lng;
});
document.documentElement.lang = i18n.language;

/** t translates outside React components. */
export const t = i18n.t.bind(i18n);

export default i18n;
