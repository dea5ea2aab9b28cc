import { useSignals } from "@preact/signals-react/runtime";
import { Button, Flex, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { ConfirmDialog } from "../../../components/confirm-dialog";
import { Dialog } from "../../../components/ui/dialog";
import { useBusyFor } from "../../../lib/busy-for";
import { deleteRedemption, downloadCodes, redemptionsDialog } from "../../../stores/redemptions";
import { RedemptionDrawer } from "./redemption-drawer";

function close(): void {
  redemptionsDialog.value = null;
}

/** RedemptionsDialogs mounts the drawer, the delete confirmation and the download offer in one place. */
export function RedemptionsDialogs() {
  useSignals();
  const { t } = useTranslation();
  const d = redemptionsDialog.value;
  const [isBusy, run] = useBusyFor<typeof d>();
  return (
    <>
      <RedemptionDrawer mode={d?.kind === "add" ? "add" : d?.kind === "edit" ? "edit" : null} id={d?.kind === "edit" ? d.id : null} onClose={close} />
      <ConfirmDialog
        open={d?.kind === "delete"}
        onOpenChange={(open) => !open && close()}
        title={t("redemption.deleteTitle")}
        description={t("redemption.deleteHint")}
        confirmLabel={t("redemption.delete")}
        destructive
        busy={isBusy(d)}
        onConfirm={() => {
          if (d?.kind !== "delete") return;
          void run(d, async () => {
            // The confirmation of another code (or a drawer), opened since this one was dismissed, stays open.
            if ((await deleteRedemption(d.row)) && redemptionsDialog.peek() === d) close();
          });
        }}
      />
      <Dialog
        open={d?.kind === "download"}
        onOpenChange={(open) => !open && close()}
        title={t("redemption.downloadTitle")}
        footer={
          <>
            <Button variant="soft" color="gray" onClick={close}>
              {t("redemption.cancel")}
            </Button>
            <Button
              onClick={() => {
                if (d?.kind === "download") downloadCodes(d.name, d.keys);
                close();
              }}
              data-testid="redemption-download"
            >
              {t("redemption.download")}
            </Button>
          </>
        }
      >
        <Flex direction="column" gap="2" data-testid="redemption-download-dialog">
          <Text size="2">{t("redemption.downloadAsk")}</Text>
          <Text size="2" color="gray">
            {t("redemption.downloadHint")}
          </Text>
        </Flex>
      </Dialog>
    </>
  );
}
