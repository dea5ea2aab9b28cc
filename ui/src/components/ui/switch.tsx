import { Switch as ThemeSwitch } from "@radix-ui/themes";

/** Switch is the Radix switch primitive styled by Radix Themes. */
export const Switch = ThemeSwitch;
