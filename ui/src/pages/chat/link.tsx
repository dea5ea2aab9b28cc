import { lazyPage } from "../../components/lazy-page";

/** Chat2LinkPage sends the user to the configured chat link with their token, loaded on first visit. */
export default lazyPage(() => import("./chat2link"));
