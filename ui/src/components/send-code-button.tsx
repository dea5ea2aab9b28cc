import { Button } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../api/client";

/** CODE_COOLDOWN_S is how long the button waits before a code can be sent again. */
export const CODE_COOLDOWN_S = 30;

/** useCountdown counts whole seconds down to zero. */
export function useCountdown(): [number, (seconds: number) => void] {
  const [left, setLeft] = useState(0);
  useEffect(() => {
    if (left <= 0) return;
    const timer = setTimeout(() => setLeft((v) => v - 1), 1000);
    return () => clearTimeout(timer);
  }, [left]);
  return [left, setLeft];
}

/** SendCodeButtonProps configure a send button with a cooldown. */
export interface SendCodeButtonProps {
  /** send returns false when it refused to send (validation failed), so no cooldown starts. */
  send: () => Promise<boolean>;
  label?: string;
  disabled?: boolean;
}

/** SendCodeButton sends a code and then counts down before it can be pressed again. */
export function SendCodeButton({ send, label, disabled }: SendCodeButtonProps) {
  const { t } = useTranslation();
  const [left, start] = useCountdown();
  const [busy, setBusy] = useState(false);
  const onClick = async () => {
    if (busy) return;
    setBusy(true);
    try {
      if (await send()) start(CODE_COOLDOWN_S);
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    // An explicit disabled overrides loading's: busy is named too, so a double click sends once.
    <Button type="button" variant="soft" loading={busy} disabled={busy || disabled || left > 0} onClick={onClick} data-testid="send-code">
      {left > 0 ? t("code.resendIn", { seconds: left }) : (label ?? t("code.send"))}
    </Button>
  );
}
