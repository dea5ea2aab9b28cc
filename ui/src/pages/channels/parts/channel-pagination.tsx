import { useSignals } from "@preact/signals-react/runtime";
import { Pagination } from "../../../components/pagination";
import {
  channelPage,
  channelPageSize,
  channels,
  channelSearch,
  channelsLoading,
  hasMoreChannels,
  loadChannels,
  setChannelPageSize,
  showSearchPage,
  shownChannels,
} from "../../../stores/channels";

/** ChannelPagination pages through the list, or through a search result (which the server sends whole). */
export function ChannelPagination() {
  useSignals();
  const searching = channelSearch.value !== null;
  return (
    <Pagination
      page={channelPage.value + 1}
      pageSize={channelPageSize.value}
      itemCount={shownChannels.value.length}
      total={searching ? channels.value.length : undefined}
      hasMore={hasMoreChannels.value}
      disabled={channelsLoading.value}
      onPageChange={(p) => (searching ? showSearchPage(p - 1) : void loadChannels(p - 1))}
      onPageSizeChange={(s) => void setChannelPageSize(s)}
    />
  );
}
