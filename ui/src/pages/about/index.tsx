import { Card, Flex, Heading, Spinner, Text } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { fetchAbout } from "../../api/status";
import { RichContent } from "../../components/rich-content";
import { useLiveText } from "../../lib/live-text";

/** AboutPage shows the configured about text, a framed page when it is a URL. */
export default function AboutPage() {
  const { t } = useTranslation();
  const about = useLiveText(fetchAbout);
  if (about === null) {
    return (
      <Flex justify="center" py="6">
        <Spinner size="3" />
      </Flex>
    );
  }
  if (!about.trim()) {
    return (
      <Card size="3" data-testid="about-empty">
        <Heading size="5" mb="2">
          {t("about.title")}
        </Heading>
        <Text color="gray">{t("about.empty")}</Text>
      </Card>
    );
  }
  return <RichContent text={about} allowFrame title={t("about.title")} />;
}
