import type { ComponentType } from "react";
import { ROLE_USER } from "../../lib/roles";
import { role } from "../../stores/user";
import PersonalTab from "./parts/personal";

/** SettingTab is one tab of the settings page. */
export interface SettingTab {
  /** key is the value of ?tab=. */
  key: string;
  /** label is an i18n key. */
  label: string;
  /** minRole is the lowest role that sees the tab. */
  minRole: number;
  component: ComponentType;
}

/** SETTING_TABS lists the tabs in display order; a new tab is one entry pointing at its component. */
export const SETTING_TABS: SettingTab[] = [{ key: "personal", label: "setting.personal", minRole: ROLE_USER, component: PersonalTab }];

/** visibleTabs lists the tabs the current user's role allows. */
export function visibleTabs(): SettingTab[] {
  return SETTING_TABS.filter((tab) => role.value >= tab.minRole);
}
