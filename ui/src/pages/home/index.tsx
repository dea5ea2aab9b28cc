import { Flex, Spinner } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { fetchHomePageContent } from "../../api/status";
import { RichContent } from "../../components/rich-content";
import { useLiveText } from "../../lib/live-text";
import { DefaultHome } from "./parts/default-home";
import { NoticeCard } from "./parts/notice-card";

/** HomePage shows the notice and the configured home page content, or a default overview; a save of the content shows at once. */
export default function HomePage() {
  const { t } = useTranslation();
  const content = useLiveText(fetchHomePageContent);
  return (
    <Flex direction="column" gap="4">
      <NoticeCard />
      {content === null ? (
        <Flex justify="center" py="6">
          <Spinner size="3" />
        </Flex>
      ) : content.trim() ? (
        <RichContent text={content} allowFrame title={t("nav.home")} />
      ) : (
        <DefaultHome />
      )}
    </Flex>
  );
}
