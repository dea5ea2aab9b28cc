import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Text, TextField } from "@radix-ui/themes";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { handleError } from "../api/client";
import { status } from "../stores/status";
import { Dialog } from "./ui/dialog";

/** WeChatCodeDialogProps configure the QR-code-and-code dialog. */
export interface WeChatCodeDialogProps {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  submitLabel: string;
  /** onSubmit receives the code; the dialog closes when it resolves. */
  onSubmit: (code: string) => Promise<void>;
}

/** WeChatCodeDialog shows the official account's QR code and asks for the code it replies with. */
export function WeChatCodeDialog({ open, onOpenChange, title, submitLabel, onSubmit }: WeChatCodeDialogProps) {
  useSignals();
  const { t } = useTranslation();
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const qr = status.value.wechat_qrcode;
  const submit = async () => {
    // Enter in the field while a code is in flight does not send it again.
    if (busy || !code.trim()) return;
    setBusy(true);
    try {
      await onSubmit(code.trim());
      setCode("");
      onOpenChange(false);
    } catch (err) {
      handleError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={open}
      onOpenChange={onOpenChange}
      title={title}
      footer={
        // An explicit disabled overrides loading's: busy is named too, so a double click sends once.
        <Button loading={busy} onClick={submit} disabled={busy || !code.trim()}>
          {submitLabel}
        </Button>
      }
    >
      <Flex direction="column" align="center" gap="3">
        {qr ? <img src={qr} alt={t("wechat.qrAlt")} className="wechat-qr" /> : null}
        <Text size="2" color="gray" align="center">
          {t("wechat.hint")}
        </Text>
        <TextField.Root
          className="full-width"
          placeholder={t("wechat.code")}
          aria-label={t("wechat.code")}
          value={code}
          onChange={(e) => setCode(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") void submit();
          }}
        />
      </Flex>
    </Dialog>
  );
}
