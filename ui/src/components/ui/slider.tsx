import { Slider as ThemeSlider } from "@radix-ui/themes";
import { useEffect, useRef, type ComponentProps } from "react";

/**
 * Slider is the Radix slider styled by Radix Themes. Its aria-label names the
 * thumb too: the thumb is the element a screen reader announces, and Radix
 * Themes keeps the label on the root.
 */
export function Slider(props: ComponentProps<typeof ThemeSlider>) {
  const ref = useRef<HTMLSpanElement>(null);
  const label = props["aria-label"];
  useEffect(() => {
    if (!label) return;
    ref.current?.querySelectorAll('[role="slider"]').forEach((thumb) => thumb.setAttribute("aria-label", label));
  });
  return <ThemeSlider ref={ref} {...props} />;
}
