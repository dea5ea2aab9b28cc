import { lazyPage } from "../../components/lazy-page";

/** TopUpPage is the wallet, loaded on first visit. */
export default lazyPage(() => import("./page"));
