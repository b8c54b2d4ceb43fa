import type { ComponentChildren } from "preact";
import type { RequestError } from "../api.ts";

/** A list or a panel waiting for its data. */
export function Loading({ what }: { what: string }) {
  return (
    <p class="state" role="status">
      Loading {what}…
    </p>
  );
}

/** A list with nothing in it, saying so. */
export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state state-empty">{children}</p>;
}

/** A request that failed: what could not be loaded and the server's reason. */
export function Failed({ what, error }: { what: string; error: RequestError }) {
  const reason =
    error.status === 404 && error.code === "NOT_FOUND"
      ? "this server does not offer it"
      : error.status === 0
        ? "the server could not be reached"
        : error.message;
  return (
    <p class="state state-error" role="alert">
      <span aria-hidden="true">⚠ </span>Could not load {what}: {reason}.
    </p>
  );
}
