import type { FastifyInstance } from "fastify";

/** The methods each registered path answers, to tell a wrong method (405) from an unknown path (404). */
export type RouteIndex = {
  /** Methods registered for a concrete request path (e.g. `/api/tx/0xab…`), empty when none matches. */
  allowedMethods(path: string): string[];
};

/**
 * Collect every route as it is registered (Fastify `onRoute` hook, so call this before registering routes)
 * and match concrete paths against their patterns. Catch-all `*` routes (the CORS preflight handler) are
 * left out: they would make every path look known.
 */
export function createRouteIndex(app: FastifyInstance): RouteIndex {
  const routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  app.addHook("onRoute", (route) => {
    if (route.url === "*" || route.url === "/*") return;
    let entry = routes.get(route.url);
    if (!entry) {
      entry = { pattern: routePattern(route.url), methods: new Set() };
      routes.set(route.url, entry);
    }
    for (const method of [route.method].flat()) entry.methods.add(method.toUpperCase());
  });
  return {
    allowedMethods(path) {
      const methods = new Set<string>();
      for (const { pattern, methods: own } of routes.values()) {
        if (pattern.test(path)) for (const method of own) methods.add(method);
      }
      return [...methods].sort();
    },
  };
}

/** A Fastify route URL (`/api/tx/:hash`, `/docs/static/*`) as an anchored regular expression. */
export function routePattern(url: string): RegExp {
  const source = url
    .split("/")
    .map((segment) =>
      segment
        // a parameter, optionally with its own regexp (`:hash`, `:id(^\\d+)`), or a wildcard
        .split(/(:[A-Za-z0-9_]+(?:\([^)]*\))?|\*)/)
        .map((part) => {
          if (part === "*") return ".*";
          if (part.startsWith(":") && part.length > 1) return "[^/]+";
          return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        })
        .join(""),
    )
    .join("/");
  return new RegExp(`^${source}$`);
}
