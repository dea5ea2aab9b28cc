import { lazyPage } from "../../components/lazy-page";

/** UsersPage is the administrators' user management page, loaded on first visit. */
export default lazyPage(() => import("./page"));
