import { useSignals } from "@preact/signals-react/runtime";
import { Pagination } from "../../../components/pagination";
import {
  hasMoreTokens,
  loadTokens,
  setTokenPageSize,
  showSearchPage,
  shownTokens,
  tokenPage,
  tokenPageSize,
  tokens,
  tokenSearch,
  tokensLoading,
} from "../../../stores/tokens";

/** TokenPagination pages through the list, or through a search result (which the server sends whole). */
export function TokenPagination() {
  useSignals();
  const searching = tokenSearch.value !== null;
  return (
    <Pagination
      page={tokenPage.value + 1}
      pageSize={tokenPageSize.value}
      itemCount={shownTokens.value.length}
      total={searching ? tokens.value.length : undefined}
      hasMore={hasMoreTokens.value}
      disabled={tokensLoading.value}
      onPageChange={(p) => (searching ? showSearchPage(p - 1) : void loadTokens(p - 1))}
      onPageSizeChange={(s) => void setTokenPageSize(s)}
    />
  );
}
