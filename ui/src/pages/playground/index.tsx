import { lazyPage } from "../../components/lazy-page";

/** PlaygroundPage is the chat playground; its Markdown renderer loads with it on first visit. */
export default lazyPage(() => import("./page"));
