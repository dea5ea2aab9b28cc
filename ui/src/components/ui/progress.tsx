import { Progress as ThemeProgress } from "@radix-ui/themes";

/** Progress is the Radix progress primitive styled by Radix Themes. */
export const Progress = ThemeProgress;
