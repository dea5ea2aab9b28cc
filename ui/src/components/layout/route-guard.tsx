import { useSignals } from "@preact/signals-react/runtime";
import type { ReactNode } from "react";
import { Redirect } from "wouter";
import ForbiddenPage from "../../pages/not-found/forbidden";
import type { Access } from "../../routes";
import { isAdmin, isLoggedIn, isRoot } from "../../stores/user";

/** LOGIN_REDIRECT is where anonymous visitors of protected pages go; the login page then shows the expired notice. */
export const LOGIN_REDIRECT = "/login?expired=true";

/** RouteGuard sends anonymous visitors of protected pages to the login page and refuses pages above the user's role. */
export function RouteGuard({ access, children }: { access: Access; children: ReactNode }) {
  useSignals();
  if (access === "public") return <>{children}</>;
  if (!isLoggedIn.value) return <Redirect to={LOGIN_REDIRECT} replace />;
  if (access === "admin" && !isAdmin.value) return <ForbiddenPage />;
  if (access === "root" && !isRoot.value) return <ForbiddenPage />;
  return <>{children}</>;
}
