import { useEffect, useState } from "react";
import { onReconnected, onTopic } from "../ws/socket";

/**
 * useLiveText reads an administrator's text (the home page, About) and reads
 * it again when the options change (and after a reconnect, which may have
 * missed a change), so an open page follows a save. It is null until the
 * first answer; a failed read shows as empty text.
 */
export function useLiveText(read: () => Promise<string>): string | null {
  const [text, setText] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    let seq = 0;
    const load = () => {
      const mine = ++seq;
      read()
        .then((t) => live && mine === seq && setText(t))
        .catch(() => live && mine === seq && setText((cur) => cur ?? ""));
    };
    load();
    const off = onTopic("status", load);
    const offReconnect = onReconnected(load);
    return () => {
      live = false;
      off();
      offReconnect();
    };
  }, [read]);
  return text;
}
