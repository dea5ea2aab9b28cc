import { useSignals } from "@preact/signals-react/runtime";
import { Pagination } from "../../../components/pagination";
import { channelPage, channelPageSize, channels, channelSearch, channelsLoading, hasMoreChannels, loadChannels, setChannelPageSize } from "../../../stores/channels";

/** ChannelPagination pages through the list; a search result is shown whole. */
export function ChannelPagination() {
  useSignals();
  if (channelSearch.value) return null;
  return (
    <Pagination
      page={channelPage.value + 1}
      pageSize={channelPageSize.value}
      itemCount={channels.value.length}
      hasMore={hasMoreChannels.value}
      disabled={channelsLoading.value}
      onPageChange={(p) => void loadChannels(p - 1)}
      onPageSizeChange={(s) => void setChannelPageSize(s)}
    />
  );
}
