import { api, type SearchResult } from "../api.ts";
import { resultHref } from "../components/SearchBox.tsx";
import { Empty, Failed, Loading } from "../components/States.tsx";
import { here } from "../router.ts";
import { useAsync } from "../useAsync.ts";

const KIND: Record<SearchResult["type"], string> = {
  transaction: "Transaction",
  token: "Token",
  address: "Address",
  block: "Block",
  protocol: "Protocol",
};

function describe(r: SearchResult): string {
  switch (r.type) {
    case "transaction":
      return `${r.txHash} (block ${r.blockNumber}, ${r.actionType})`;
    case "token":
      return `${r.name} (${r.symbol}) ${r.address}`;
    case "address":
      return `${r.address} (${r.transactionCount} stored transactions)`;
    case "block":
      return `Block ${r.blockNumber} (${r.transactions.length} stored transactions)`;
    case "protocol":
      return `${r.name} (${r.id})`;
  }
}

/** `/search?q=`: every result of a search with more than one hit (or none). */
export function SearchPage() {
  const q = here.value.query.get("q")?.trim() ?? "";
  const found = useAsync(() => (q ? api.search(q) : Promise.resolve({ query: "", results: [] })), [q]);
  return (
    <>
      <h1>Search{q && <> for “{q}”</>}</h1>
      <section class="panel">
        {!q && (
          <Empty>Type a transaction hash, an address, a block number, a token or a protocol above.</Empty>
        )}
        {q && found.state === "loading" && <Loading what="the results" />}
        {q && found.state === "error" && <Failed what="the results" error={found.error} />}
        {q && found.state === "ok" && found.data.results.length === 0 && (
          <Empty>Nothing matches “{q}”.</Empty>
        )}
        {q && found.state === "ok" && found.data.results.length > 0 && (
          <ul class="rows" data-testid="search-results">
            {found.data.results.map((r) => (
              <li
                key={resultHref(r)}
                class="row"
                {...(r.type === "transaction" && { "data-testid": "tx-row", "data-tx-hash": r.txHash })}
              >
                <span class="pill">{KIND[r.type]}</span>
                <a href={resultHref(r)} class="break">
                  {describe(r)}
                </a>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
