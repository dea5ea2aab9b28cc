import { RadioGroup as ThemeRadioGroup } from "@radix-ui/themes";

/** RadioGroup is the Radix radio-group primitive styled by Radix Themes. */
export const RadioGroup = ThemeRadioGroup;
