import { useSignals } from "@preact/signals-react/runtime";
import type { ReactNode } from "react";
import { Redirect } from "wouter";
import ForbiddenPage from "../../pages/not-found/forbidden";
import type { Access } from "../../routes";
import { isAdmin, isLoggedIn, isRoot, loginPath } from "../../stores/user";

/** RouteGuard sends anonymous visitors of protected pages to the login page and refuses pages above the user's role. */
export function RouteGuard({ access, children }: { access: Access; children: ReactNode }) {
  useSignals();
  if (access === "public") return <>{children}</>;
  // A visitor who never logged in goes to /login (A §2); one whose session just ended sees the expired notice (A §8).
  if (!isLoggedIn.value) return <Redirect to={loginPath()} replace />;
  if (access === "admin" && !isAdmin.value) return <ForbiddenPage />;
  if (access === "root" && !isRoot.value) return <ForbiddenPage />;
  return <>{children}</>;
}
