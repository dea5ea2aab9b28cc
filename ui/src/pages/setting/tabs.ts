import type { ComponentType } from "react";
import { ROLE_ROOT, ROLE_USER } from "../../lib/roles";
import { role } from "../../stores/user";
import PersonalTab from "./parts/personal";
import OperationTab from "./parts/operation";
import OtherTab from "./parts/other";
import SystemTab from "./parts/system";

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
export const SETTING_TABS: SettingTab[] = [
  { key: "personal", label: "setting.personal", minRole: ROLE_USER, component: PersonalTab },
  { key: "operation", label: "setting.operation", minRole: ROLE_ROOT, component: OperationTab },
  { key: "system", label: "setting.system", minRole: ROLE_ROOT, component: SystemTab },
  { key: "other", label: "setting.other", minRole: ROLE_ROOT, component: OtherTab },
];

/** visibleTabs lists the tabs the current user's role allows. */
export function visibleTabs(): SettingTab[] {
  return SETTING_TABS.filter((tab) => role.value >= tab.minRole);
}
