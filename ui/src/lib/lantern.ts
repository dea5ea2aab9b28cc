/** isLanternDay reports whether the New Year lantern is shown: 1 January and 9 to 24 February. */
export function isLanternDay(d: Date): boolean {
  const month = d.getMonth();
  const day = d.getDate();
  return (month === 0 && day === 1) || (month === 1 && day >= 9 && day <= 24);
}

/** LANTERN_ANIMATION_MS is how long the animation runs. */
export const LANTERN_ANIMATION_MS = 3000;

/** LANTERN_RELOAD_MS is the delay after the animation before the page reloads. */
export const LANTERN_RELOAD_MS = 10000;

/** clock supplies the current time; tests replace now to pin a date. */
export const clock = {
  now: (): Date => new Date(),
};
