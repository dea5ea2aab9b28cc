import { Checkbox as ThemeCheckbox } from "@radix-ui/themes";

/** Checkbox is the Radix checkbox primitive styled by Radix Themes. */
export const Checkbox = ThemeCheckbox;
