import { Flex, Heading } from "@radix-ui/themes";
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { followDefaults, loadDashboard } from "../../stores/dashboard";
import { onReconnected, onTopic } from "../../ws/socket";
import { Charts } from "./parts/charts";
import { FilterBar } from "./parts/filter-bar";
import { Totals } from "./parts/totals";

/**
 * LIVE_DEBOUNCE_MS groups the balance updates of a burst, or of a steady flow of calls, into one dashboard refresh.
 * It is the log page's 5 s: the console shares the per-IP `/api` budget (180 calls in 180 s, S §12) with everything
 * its user does, and a dashboard refreshed every 2 s on a busy gateway took half of it alone.
 */
const LIVE_DEBOUNCE_MS = 5000;

/** DetailPage assembles the query form, the totals and the charts, and refreshes them as usage is charged (for an administrator, anyone's). */
export default function DetailPage() {
  const { t } = useTranslation();
  useEffect(() => {
    followDefaults();
    void loadDashboard();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let reading = false;
    let again = false;
    let closed = false;
    // A user.self message means the balance moved, usually by a charge the
    // dashboard would count, and an administrator's log.tail (or, with
    // consume logs off, data.charged) carries every user's charges; the rows
    // are written with the charge, so one quiet reload 5 s after the first of
    // them is enough, those arriving meanwhile joining it. The wait is not started again by each message: on a busy
    // gateway, whose calls never pause for 5 s, that reload would never come.
    // Nor does a reload start while the one before still runs (a year of
    // rows takes a while): one more follows it.
    const refresh = () => {
      if (timer || closed) return;
      timer = setTimeout(() => {
        timer = undefined;
        if (reading) {
          again = true;
          return;
        }
        reading = true;
        void loadDashboard(true).finally(() => {
          reading = false;
          if (again) {
            again = false;
            refresh();
          }
        });
      }, LIVE_DEBOUNCE_MS);
    };
    const off = onTopic("user.self", refresh);
    const offTail = onTopic("log.tail", refresh);
    // With consume logs off no log tail comes: charges the dashboard still counts are announced alone.
    const offData = onTopic("data.charged", refresh);
    // Charges made while the socket was down were not announced.
    const offReconnect = onReconnected(() => void loadDashboard(true));
    return () => {
      off();
      offTail();
      offData();
      offReconnect();
      closed = true;
      if (timer) clearTimeout(timer);
    };
  }, []);
  return (
    <Flex direction="column" gap="4" data-testid="detail-page">
      <Heading size="6">{t("dashboard.title")}</Heading>
      <FilterBar />
      <Totals />
      <Charts />
    </Flex>
  );
}
