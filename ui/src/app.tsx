import { useSignals } from "@preact/signals-react/runtime";
import { Theme } from "@radix-ui/themes";
import { Route, Switch } from "wouter";
import { CopyDialog } from "./components/copy-dialog";
import { AppShell } from "./components/layout/app-shell";
import { RouteGuard } from "./components/layout/route-guard";
import { Toaster } from "./components/toaster";
import NotFoundPage from "./pages/not-found";
import { routes } from "./routes";
import { theme } from "./stores/theme";

/** App wires the theme, the shell, the routes and the global dialogs. */
export function App() {
  useSignals();
  return (
    <Theme appearance={theme.value} accentColor="indigo" grayColor="slate" radius="medium" scaling="100%" hasBackground className="app-theme">
      <AppShell>
        <Switch>
          {routes.map((r) => (
            <Route key={r.path} path={r.path}>
              <RouteGuard access={r.access}>
                <r.component />
              </RouteGuard>
            </Route>
          ))}
          <Route>
            <NotFoundPage />
          </Route>
        </Switch>
      </AppShell>
      <Toaster />
      <CopyDialog />
    </Theme>
  );
}
