import { lazyPage } from "../../components/lazy-page";

/** Logs is the usage log page (all users for administrators, own entries otherwise), loaded on first visit. */
export default lazyPage(() => import("./page"));
