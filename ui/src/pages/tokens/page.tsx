import { Callout, Flex, Heading } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { Icon } from "../../components/icons";
import { loadTokens, subscribeTokenLive } from "../../stores/tokens";
import { SearchBar } from "./parts/search-bar";
import { TokenDialogs } from "./parts/token-dialogs";
import { TokenDrawer } from "./parts/token-drawer";
import { TokenPagination } from "./parts/token-pagination";
import { TokenTable } from "./parts/token-table";
import { TokenToolbar } from "./parts/toolbar";

/** TokensPage lists the user's API tokens with search, bulk copy, the create/edit drawer and the delete confirmation. */
export default function TokensPage() {
  const { t } = useTranslation();
  useEffect(() => {
    void loadTokens(0);
    return subscribeTokenLive();
  }, []);
  return (
    <Flex direction="column" gap="3" data-testid="tokens-page">
      <Heading size="6">{t("tokens.title")}</Heading>
      <Callout.Root color="orange" size="1" data-testid="token-banner">
        <Callout.Icon>
          <Icon name="alert" />
        </Callout.Icon>
        <Callout.Text>{t("tokens.banner")}</Callout.Text>
      </Callout.Root>
      <SearchBar />
      <TokenToolbar />
      <TokenTable />
      <TokenPagination />
      <TokenDrawer />
      <TokenDialogs />
    </Flex>
  );
}
