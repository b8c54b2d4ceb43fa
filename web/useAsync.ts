import { useEffect, useState } from "preact/hooks";
import { RequestError } from "./api.ts";

export type Async<T> =
  | { state: "loading" }
  | { state: "ok"; data: T }
  | { state: "error"; error: RequestError };

/**
 * The result of `load`, run again when a key changes; an answer that arrives after the keys changed is
 * dropped. `reloadMs` reloads in the background (the previous data stays on screen meanwhile).
 */
export function useAsync<T>(load: () => Promise<T>, keys: unknown[], reloadMs?: number): Async<T> {
  const [result, setResult] = useState<Async<T>>({ state: "loading" });
  useEffect(() => {
    let current = true;
    setResult({ state: "loading" });
    const run = (background: boolean) =>
      load().then(
        (data) => current && setResult({ state: "ok", data }),
        (error: unknown) => {
          if (!current || background) return;
          setResult({
            state: "error",
            error: error instanceof RequestError ? error : new RequestError(0, "CLIENT", String(error)),
          });
        },
      );
    void run(false);
    const timer = reloadMs ? setInterval(() => void run(true), reloadMs) : undefined;
    return () => {
      current = false;
      clearInterval(timer);
    };
  }, keys);
  return result;
}
