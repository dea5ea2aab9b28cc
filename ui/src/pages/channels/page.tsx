import { Flex, Heading } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { loadChannels, loadGroups, subscribeChannelLive } from "../../stores/channels";
import { ChannelDialogs } from "./parts/channel-dialogs";
import { ChannelDrawer } from "./parts/channel-drawer";
import { ChannelPagination } from "./parts/channel-pagination";
import { ChannelTable } from "./parts/channel-table";
import { useEditorRoute } from "./parts/editor-route";
import { ChannelToolbar } from "./parts/toolbar";
import { SearchBar } from "./parts/search-bar";
import { TestAllProgress } from "./parts/test-all-progress";

/** ChannelsPage lists the upstream channels with their health, and holds the create/edit drawer (open at /channel/add and /channel/edit/{id}) and the confirmations. */
export default function ChannelsPage() {
  const { t } = useTranslation();
  useEffect(() => {
    void loadChannels(0);
    void loadGroups();
    return subscribeChannelLive();
  }, []);
  useEditorRoute();
  return (
    <Flex direction="column" gap="3" data-testid="channels-page">
      <Heading size="6">{t("channels.title")}</Heading>
      <SearchBar />
      <ChannelToolbar />
      <TestAllProgress />
      <ChannelTable />
      <ChannelPagination />
      <ChannelDrawer />
      <ChannelDialogs />
    </Flex>
  );
}
