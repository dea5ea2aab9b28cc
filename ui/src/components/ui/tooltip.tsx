import { Tooltip as ThemeTooltip } from "@radix-ui/themes";

/** Tooltip is the Radix tooltip primitive styled by Radix Themes. */
export const Tooltip = ThemeTooltip;
