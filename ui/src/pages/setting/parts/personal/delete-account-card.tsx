import { Button, Card, Heading, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { showDialog } from "./dialogs";

/** DeleteAccountCard warns about and starts account deletion. */
export function DeleteAccountCard() {
  const { t } = useTranslation();
  return (
    <Card size="3">
      <Heading size="4" mb="2" color="red">
        {t("deleteAccount.title")}
      </Heading>
      <Text as="p" size="2" color="gray" mb="3">
        {t("deleteAccount.warning")}
      </Text>
      <Button color="red" variant="soft" onClick={() => showDialog("delete")} data-testid="delete-account">
        {t("deleteAccount.action")}
      </Button>
    </Card>
  );
}
