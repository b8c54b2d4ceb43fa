import { withQuery } from "../router.ts";

/**
 * Paging of a list whose position lives in the URL under `param` (a cursor or an offset): "Newest" back to
 * the first page and `next-page` to the following one, absent on the last page.
 */
export function Pager({ param, next, atStart }: { param: string; next: string | null; atStart: boolean }) {
  if (atStart && next === null) return null;
  return (
    <nav class="pager" aria-label="pages">
      {!atStart && <a href={withQuery({ [param]: null })}>« First page</a>}
      {next !== null && (
        <a href={withQuery({ [param]: next })} data-testid="next-page" rel="next">
          Next page »
        </a>
      )}
    </nav>
  );
}
