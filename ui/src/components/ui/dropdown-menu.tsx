import { DropdownMenu as ThemeDropdownMenu } from "@radix-ui/themes";

/** DropdownMenu is the Radix dropdown-menu primitive styled by Radix Themes. */
export const DropdownMenu = ThemeDropdownMenu;
