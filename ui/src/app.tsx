import { useSignals } from "@preact/signals-react/runtime";
import { Theme } from "@radix-ui/themes";
import { Route, Switch } from "wouter";
import { CopyDialog } from "./components/copy-dialog";
import { AppShell } from "./components/layout/app-shell";
import { RouteGuard } from "./components/layout/route-guard";
import { Toaster } from "./components/toaster";
import NotFoundPage from "./pages/not-found";
import { routes, type RouteDef } from "./routes";
import { theme } from "./stores/theme";

// pageKeys gives every route of one component the key of its first route:
// the Switch renders only the matching route, and an unchanged key lets React
// keep that page mounted when the address moves to another of its routes.
const pageKeys = new Map<RouteDef["component"], string>();
for (const r of routes) if (!pageKeys.has(r.component)) pageKeys.set(r.component, r.path);

/** App wires the theme, the shell, the routes and the global dialogs. */
export function App() {
  useSignals();
  return (
    <Theme appearance={theme.value} accentColor="indigo" grayColor="slate" radius="medium" scaling="100%" hasBackground className="app-theme">
      <AppShell>
        <Switch>
          {routes.map((r) => (
            <Route key={pageKeys.get(r.component)} path={r.path}>
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
