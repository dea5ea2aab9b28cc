import { Tabs as ThemeTabs } from "@radix-ui/themes";

/** Tabs is the Radix tabs primitive styled by Radix Themes. */
export const Tabs = ThemeTabs;
