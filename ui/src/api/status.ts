import { api } from "./client";
import type { Status } from "./types";

/** fetchStatus reads the public status object; the caller reports failures. */
export async function fetchStatus(): Promise<Status> {
  return (await api.get<Status>("/api/status", { silent: true })).data ?? {};
}

/** fetchNotice reads the site notice (Markdown or HTML). */
export async function fetchNotice(): Promise<string> {
  return (await api.get<string>("/api/notice", { silent: true })).data ?? "";
}

/** fetchAbout reads the about text, which may be a URL. */
export async function fetchAbout(): Promise<string> {
  return (await api.get<string>("/api/about")).data ?? "";
}

/** fetchHomePageContent reads the home page text, which may be a URL. */
export async function fetchHomePageContent(): Promise<string> {
  return (await api.get<string>("/api/home_page_content")).data ?? "";
}
