import { useSignals } from "@preact/signals-react/runtime";
import { Pagination } from "../../../components/pagination";
import { hasMoreTokens, loadTokens, setTokenPageSize, tokenPage, tokenPageSize, tokens, tokenSearch, tokensLoading } from "../../../stores/tokens";

/** TokenPagination pages through the list; a search result is shown whole. */
export function TokenPagination() {
  useSignals();
  if (tokenSearch.value) return null;
  return (
    <Pagination
      page={tokenPage.value + 1}
      pageSize={tokenPageSize.value}
      itemCount={tokens.value.length}
      hasMore={hasMoreTokens.value}
      disabled={tokensLoading.value}
      onPageChange={(p) => void loadTokens(p - 1)}
      onPageSizeChange={(s) => void setTokenPageSize(s)}
    />
  );
}
