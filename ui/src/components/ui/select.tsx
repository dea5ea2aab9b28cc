import { Select as ThemeSelect } from "@radix-ui/themes";

/** Select is the Radix select primitive styled by Radix Themes. */
export const Select = ThemeSelect;
