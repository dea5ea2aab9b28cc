import { Popover as ThemePopover } from "@radix-ui/themes";

/** Popover is the Radix popover primitive styled by Radix Themes. */
export const Popover = ThemePopover;
