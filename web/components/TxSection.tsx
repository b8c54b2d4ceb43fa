import type { ComponentChildren } from "preact";
import type { TxPage } from "../api.ts";
import type { Async } from "../useAsync.ts";
import { Pager } from "./Pager.tsx";
import { Empty, Failed, Loading } from "./States.tsx";
import { TxList } from "./TxList.tsx";

/** A paged list of transactions with its filter, loading, error and empty states (cursor in the URL). */
export function TxSection(props: {
  title: string;
  page: Async<TxPage>;
  cursor: string | null;
  filter?: ComponentChildren;
  empty: string;
}) {
  const { title, page, cursor, filter, empty } = props;
  return (
    <section class="panel" aria-label={title}>
      <header class="panel-head">
        <h2>{title}</h2>
        {filter}
      </header>
      {page.state === "loading" && <Loading what="the transactions" />}
      {page.state === "error" && <Failed what="the transactions" error={page.error} />}
      {page.state === "ok" && page.data.transactions.length === 0 && <Empty>{empty}</Empty>}
      {page.state === "ok" && page.data.transactions.length > 0 && <TxList txs={page.data.transactions} />}
      {page.state === "ok" && <Pager param="cursor" next={page.data.nextCursor} atStart={cursor === null} />}
    </section>
  );
}
