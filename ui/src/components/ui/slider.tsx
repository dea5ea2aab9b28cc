import { Slider as ThemeSlider } from "@radix-ui/themes";

/** Slider is the Radix slider primitive styled by Radix Themes. */
export const Slider = ThemeSlider;
