import { useSignals } from "@preact/signals-react/runtime";
import { Box, Callout } from "@radix-ui/themes";
import { useTranslation } from "react-i18next";
import { Icon } from "../../../components/icons";
import { RichContent } from "../../../components/rich-content";
import { notice } from "../../../stores/notice";

/** NoticeCard shows the site notice when one is set; it follows live updates. */
export function NoticeCard() {
  useSignals();
  const { t } = useTranslation();
  const text = notice.value.trim();
  if (!text) return null;
  return (
    <Callout.Root color="blue" data-testid="notice" aria-label={t("home.notice")}>
      <Callout.Icon>
        <Icon name="info" />
      </Callout.Icon>
      <Box className="notice-body">
        <RichContent text={text} />
      </Box>
    </Callout.Root>
  );
}
