import { useSignals } from "@preact/signals-react/runtime";
import { Pagination } from "../../../components/pagination";
import { loadLogs, logPage, logPageSize, logs, logsLoading, logTotal, setLogPageSize } from "../../../stores/logs";

/** LogPagination pages through the logs with the server's total. */
export function LogPagination() {
  useSignals();
  return (
    <Pagination
      page={logPage.value}
      pageSize={logPageSize.value}
      itemCount={logs.value.length}
      total={logTotal.value}
      disabled={logsLoading.value}
      onPageChange={(p) => void loadLogs(p)}
      onPageSizeChange={(s) => void setLogPageSize(s)}
    />
  );
}
