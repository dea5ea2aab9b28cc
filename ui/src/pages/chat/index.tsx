import { lazyPage } from "../../components/lazy-page";

/** ChatPage shows a configured chat application in a frame, loaded on first visit. */
export default lazyPage(() => import("./page"));
