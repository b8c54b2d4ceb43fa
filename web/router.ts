import { signal } from "@preact/signals";

/**
 * A router of a few lines over the History API: the URL (path and query) is a signal, links inside the app
 * change it without a reload, and the back button restores it. Everything a person can share (page, filters,
 * cursors, chart ranges) lives in the URL.
 */
export type Location = { path: string; query: URLSearchParams };

const read = (): Location => ({ path: location.pathname, query: new URLSearchParams(location.search) });

export const here = signal<Location>(read());

/** Go to `to` (a same-origin path with an optional query), adding a history entry unless `replace`. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  here.value = read();
  if (!options.replace) window.scrollTo(0, 0);
}

/** The current URL with some query parameters set (null removes one), as a path to navigate to. */
export function withQuery(changes: Record<string, string | null>): string {
  const query = new URLSearchParams(here.value.query);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null || value === "") query.delete(key);
    else query.set(key, value);
  }
  const text = query.toString();
  return `${here.value.path}${text ? `?${text}` : ""}`;
}

/** Paths served by the server itself, not by the app: links to them load normally. */
const SERVER_PATHS = /^\/(api|v2\/api|ws|docs)(\/|$)|^\/(openapi\.json|healthz|readyz|metrics)$/;

/** Take over clicks on same-origin links (not with a modifier key, a target or a download). Call once. */
export function startRouter(): void {
  window.addEventListener("popstate", () => {
    here.value = read();
  });
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element | null)?.closest?.("a");
    if (!anchor || anchor.target || anchor.hasAttribute("download")) return;
    const url = new URL(anchor.href, location.href);
    if (url.origin !== location.origin || SERVER_PATHS.test(url.pathname)) return;
    event.preventDefault();
    navigate(`${url.pathname}${url.search}`);
  });
}

export type Route =
  | { page: "home" }
  | { page: "tx"; hash: string }
  | { page: "address"; address: string }
  | { page: "token"; address: string }
  | { page: "protocol"; id: string }
  | { page: "block"; number: string }
  | { page: "search" }
  | { page: "notFound" };

/** The page of a path; unknown paths and malformed parameters are the not-found page. */
export function matchRoute(path: string): Route {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const [first, second, ...rest] = parts;
  if (parts.length === 0) return { page: "home" };
  if (first === "search" && parts.length === 1) return { page: "search" };
  if (second === undefined || rest.length > 0) return { page: "notFound" };
  if (first === "tx" && /^0x[0-9a-fA-F]{64}$/.test(second)) return { page: "tx", hash: second.toLowerCase() };
  if (first === "address" && /^0x[0-9a-fA-F]{40}$/.test(second)) return { page: "address", address: second };
  if (first === "token" && /^0x[0-9a-fA-F]{40}$/.test(second)) return { page: "token", address: second };
  if (first === "protocol" && /^[\w.-]{1,64}$/.test(second)) return { page: "protocol", id: second };
  if (first === "block" && /^\d{1,15}$/.test(second)) return { page: "block", number: second };
  return { page: "notFound" };
}
