import { useSignals } from "@preact/signals-react/runtime";
import { Flex, Link, Text } from "@radix-ui/themes";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { readString } from "../../lib/storage";
import { status, statusLoaded, systemName } from "../../stores/status";
import { RichContent } from "../rich-content";

/** FOOTER_RETRIES and FOOTER_RETRY_MS bound how long the footer waits for custom HTML to be stored. */
export const FOOTER_RETRIES = 5;
export const FOOTER_RETRY_MS = 200;

/** Footer shows the site's custom footer HTML when set, or the default credits with the version. */
export function Footer() {
  useSignals();
  const { t } = useTranslation();
  const [stored, setStored] = useState<string>(() => readString("footer_html") ?? "");
  useEffect(() => {
    if (stored) return;
    let tries = 0;
    const timer = setInterval(() => {
      tries++;
      const v = readString("footer_html") ?? "";
      if (v) setStored(v);
      if (v || tries >= FOOTER_RETRIES) clearInterval(timer);
    }, FOOTER_RETRY_MS);
    return () => clearInterval(timer);
  }, [stored]);
  const live = status.value.footer_html;
  // The stored copy only stands in until the server has answered: a footer cleared since is gone.
  const html = typeof live === "string" && live !== "" ? live : statusLoaded.value ? "" : stored;
  if (html) {
    return (
      <footer className="footer" data-testid="footer">
        <RichContent text={html} markdown={false} className="footer-custom" />
      </footer>
    );
  }
  const version = status.value.version;
  return (
    <footer className="footer" data-testid="footer">
      <Flex justify="center" gap="1" wrap="wrap">
        <Text size="1" color="gray">
          {systemName.value} {version ? version : ""}
        </Text>
        <Text size="1" color="gray">
          {t("footer.credits")}{" "}
          <Link href="https://github.com/Calcium-Ion/new-api" target="_blank" rel="noopener noreferrer">
            New API
          </Link>{" "}
          {t("footer.and")}{" "}
          <Link href="https://github.com/songquanpeng/one-api" target="_blank" rel="noopener noreferrer">
            One API
          </Link>
        </Text>
      </Flex>
    </footer>
  );
}
