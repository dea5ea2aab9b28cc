import { Flex, Spinner, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";

/** OptionsLoading stands in for a settings tab until the options were read. */
export function OptionsLoading() {
  const { t } = useTranslation();
  return (
    <Flex gap="2" align="center" py="6" justify="center" data-testid="options-loading">
      <Spinner />
      <Text size="2" color="gray">
        {t("options.loading")}
      </Text>
    </Flex>
  );
}
