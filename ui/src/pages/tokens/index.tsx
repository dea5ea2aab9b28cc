import { lazyPage } from "../../components/lazy-page";

/** Tokens is the token list of the logged-in user, loaded on first visit. */
export default lazyPage(() => import("./page"));
