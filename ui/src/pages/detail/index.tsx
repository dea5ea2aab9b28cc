import { lazyPage } from "../../components/lazy-page";

/** DetailPage is the data dashboard; its chart library loads with it on first visit. */
export default lazyPage(() => import("./page"));
