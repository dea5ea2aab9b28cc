import { useSignals } from "@preact/signals-react/runtime";
import { Callout } from "@radix-ui/themes";
import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { liveDown } from "../../ws/socket";
import { Footer } from "./footer";
import { Sidebar } from "./sidebar";
import { TopBar } from "./top-bar";

/** AppShell lays out the top bar, the sidebar, the page and the footer. */
export function AppShell({ children }: { children: ReactNode }) {
  useSignals();
  const { t } = useTranslation();
  return (
    <div className="app">
      <TopBar />
      <div className="app-body">
        <Sidebar />
        <div className="app-main">
          {liveDown.value && (
            <Callout.Root className="live-down" color="red" size="1" role="status" data-testid="live-down">
              <Callout.Text>{t("error.liveDown")}</Callout.Text>
            </Callout.Root>
          )}
          <main className="page">{children}</main>
          <Footer />
        </div>
      </div>
    </div>
  );
}
