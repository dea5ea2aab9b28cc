import { lazyPage } from "../../components/lazy-page";

/** RedemptionsPage is the administrators' redemption-code page, loaded on first visit. */
export default lazyPage(() => import("./page"));
