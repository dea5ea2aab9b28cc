import { lazyPage } from "../../components/lazy-page";

/** Channels is the channel management page (administrators), loaded on first visit. */
export default lazyPage(() => import("./page"));
