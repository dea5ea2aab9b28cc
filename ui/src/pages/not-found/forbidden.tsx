import { Flex, Heading, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";

/** ForbiddenPage is shown when a page needs a higher role than the user's. */
export default function ForbiddenPage() {
  const { t } = useTranslation();
  return (
    <Flex direction="column" align="center" gap="3" py="9" data-testid="forbidden">
      <Heading size="6">{t("forbidden.title")}</Heading>
      <Text color="gray">{t("forbidden.hint")}</Text>
    </Flex>
  );
}
