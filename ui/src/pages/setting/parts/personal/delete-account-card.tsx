import { useSignals } from "@preact/signals-react/runtime";
import { Button, Card, Heading, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { ROLE_ROOT } from "../../../../lib/roles";
import { role } from "../../../../stores/user";
import { showDialog } from "./dialogs";

/** DeleteAccountCard warns about and starts account deletion; the root account, which the server never deletes, is told so instead. */
export function DeleteAccountCard() {
  useSignals();
  const { t } = useTranslation();
  const root = role.value >= ROLE_ROOT;
  return (
    <Card size="3">
      <Heading size="4" mb="2" color="red">
        {t("deleteAccount.title")}
      </Heading>
      <Text as="p" size="2" color="gray" mb="3" data-testid="delete-account-note">
        {t(root ? "deleteAccount.rootKept" : "deleteAccount.warning")}
      </Text>
      <Button color="red" variant="soft" disabled={root} onClick={() => showDialog("delete")} data-testid="delete-account">
        {t("deleteAccount.action")}
      </Button>
    </Card>
  );
}
