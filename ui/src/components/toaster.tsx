import { useSignals } from "@preact/signals-react/runtime";
import { useTranslation } from "react-i18next";
import { dismissToast, toasts } from "../stores/toast";
import { Toast, ToastProvider, ToastViewport } from "./ui/toast";

/** Toaster renders the queued toasts. */
export function Toaster() {
  useSignals();
  const { t } = useTranslation();
  return (
    <ToastProvider swipeDirection="right" label={t("common.notifications")}>
      {toasts.value.map((item) => (
        <Toast key={item.id} kind={item.kind} duration={item.duration} onClose={() => dismissToast(item.id)} closeLabel={t("common.close")}>
          {item.text}
        </Toast>
      ))}
      <ToastViewport label={`${t("common.notifications")} ({hotkey})`} />
    </ToastProvider>
  );
}
