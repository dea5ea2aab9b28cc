import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { clock, isLanternDay, LANTERN_ANIMATION_MS, LANTERN_RELOAD_MS } from "../../lib/lantern";
import { Tooltip } from "../ui/tooltip";

/** Lantern offers the New Year animation on lantern days; after it the page reloads. */
export function Lantern() {
  const { t } = useTranslation();
  const [playing, setPlaying] = useState(false);
  const timers = useRef<ReturnType<typeof setTimeout>[]>([]);
  useEffect(() => () => timers.current.forEach(clearTimeout), []);
  if (!isLanternDay(clock.now())) return null;
  const play = () => {
    if (playing) return;
    setPlaying(true);
    timers.current.push(
      setTimeout(() => {
        setPlaying(false);
        timers.current.push(setTimeout(() => window.location.reload(), LANTERN_RELOAD_MS));
      }, LANTERN_ANIMATION_MS),
    );
  };
  return (
    <>
      <Tooltip content={t("lantern.title")}>
        <button type="button" className="icon-button lantern-button" onClick={play} aria-label={t("lantern.title")} data-testid="lantern">
          🏮
        </button>
      </Tooltip>
      {playing ? (
        <div className="lantern-show" aria-hidden="true" data-testid="lantern-show">
          {Array.from({ length: 12 }, (_, i) => (
            <span key={i} className="lantern-float" style={{ left: `${(i * 83) % 100}%`, animationDelay: `${(i % 4) * 0.25}s` }}>
              🏮
            </span>
          ))}
          <div className="lantern-greeting">{t("lantern.greeting")}</div>
        </div>
      ) : null}
    </>
  );
}
