import { Button, Flex, Heading, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { Link } from "wouter";

/** NotFoundPage is shown for any unknown address. */
export default function NotFoundPage() {
  const { t } = useTranslation();
  return (
    <Flex direction="column" align="center" gap="3" py="9" data-testid="not-found">
      <Heading size="6">{t("notFound.title")}</Heading>
      <Text color="gray">{t("notFound.hint")}</Text>
      <Button asChild variant="soft">
        <Link href="/">{t("nav.home")}</Link>
      </Button>
    </Flex>
  );
}
