import { Flex, Spinner } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { fetchHomePageContent } from "../../api/status";
import { RichContent } from "../../components/rich-content";
import { DefaultHome } from "./parts/default-home";
import { NoticeCard } from "./parts/notice-card";

/** HomePage shows the notice and the configured home page content, or a default overview. */
export default function HomePage() {
  const [content, setContent] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    fetchHomePageContent()
      .then((text) => live && setContent(text))
      .catch(() => live && setContent(""));
    return () => {
      live = false;
    };
  }, []);
  return (
    <Flex direction="column" gap="4">
      <NoticeCard />
      {content === null ? (
        <Flex justify="center" py="6">
          <Spinner size="3" />
        </Flex>
      ) : content.trim() ? (
        <RichContent text={content} allowFrame title="home" />
      ) : (
        <DefaultHome />
      )}
    </Flex>
  );
}
