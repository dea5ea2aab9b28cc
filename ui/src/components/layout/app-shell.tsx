import type { ReactNode } from "react";
import { Footer } from "./footer";
import { Sidebar } from "./sidebar";
import { TopBar } from "./top-bar";

/** AppShell lays out the top bar, the sidebar, the page and the footer. */
export function AppShell({ children }: { children: ReactNode }) {
  return (
    <div className="app">
      <TopBar />
      <div className="app-body">
        <Sidebar />
        <div className="app-main">
          <main className="page">{children}</main>
          <Footer />
        </div>
      </div>
    </div>
  );
}
