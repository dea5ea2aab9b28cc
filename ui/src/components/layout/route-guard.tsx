import { useSignals } from "@preact/signals-react/runtime";
import { useEffect, type ReactNode } from "react";
import { Redirect, useLocation } from "wouter";
import { forgetAskedPage, isAuthPage, rememberAskedPage } from "../../lib/after-login";
import ForbiddenPage from "../../pages/not-found/forbidden";
import type { Access } from "../../routes";
import { isAdmin, isLoggedIn, isRoot, loginPath } from "../../stores/user";

/** RouteGuard sends anonymous visitors of protected pages to the login page and refuses pages above the user's role. */
export function RouteGuard({ access, children }: { access: Access; children: ReactNode }) {
  useSignals();
  const [location] = useLocation();
  const sentAway = access !== "public" && !isLoggedIn.value;
  // A page reached otherwise than through the login is no longer one to return to after it.
  useEffect(() => {
    if (!sentAway && !isAuthPage(location)) forgetAskedPage();
  }, [sentAway, location]);
  if (access === "public") return <>{children}</>;
  // A visitor without a session goes to /login (A §2) with the notice, never logged in or expired (B §2, §6),
  // and comes back here after logging in.
  if (sentAway) {
    rememberAskedPage();
    return <Redirect to={loginPath()} replace />;
  }
  if (access === "admin" && !isAdmin.value) return <ForbiddenPage />;
  if (access === "root" && !isRoot.value) return <ForbiddenPage />;
  return <>{children}</>;
}
