import { lazyPage } from "../../components/lazy-page";

/** PricingPage is the public price list, loaded on first visit. */
export default lazyPage(() => import("./page"));
