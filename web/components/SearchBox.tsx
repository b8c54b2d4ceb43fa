import { useState } from "preact/hooks";
import { api, type SearchResult } from "../api.ts";
import { navigate } from "../router.ts";

/** The page of one search result. */
export function resultHref(result: SearchResult): string {
  switch (result.type) {
    case "transaction":
      return `/tx/${result.txHash}`;
    case "token":
      return `/token/${result.address}`;
    case "address":
      return `/address/${result.address}`;
    case "block":
      return `/block/${result.blockNumber}`;
    case "protocol":
      return `/protocol/${result.id}`;
  }
}

/**
 * The search box of every page (`search-input`, Enter submits): one hit goes straight to its page, none or
 * several to the search page listing them.
 */
export function SearchBox() {
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const term = text.trim();
    if (!term || busy) return;
    setBusy(true);
    try {
      const { results } = await api.search(term);
      const only = results.length === 1 ? results[0] : undefined;
      navigate(only ? resultHref(only) : `/search?q=${encodeURIComponent(term)}`);
      setText("");
    } catch {
      navigate(`/search?q=${encodeURIComponent(term)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="search" aria-label="Search" onSubmit={submit}>
      <label class="visually-hidden" for="search">
        Search by transaction hash, address, block, token or protocol
      </label>
      <input
        id="search"
        data-testid="search-input"
        type="search"
        value={text}
        onInput={(e) => setText((e.target as HTMLInputElement).value)}
        placeholder="Tx hash, address, block, token or protocol"
        autoComplete="off"
        spellcheck={false}
        maxLength={200}
      />
      <button type="submit" disabled={busy}>
        {busy ? "Searching…" : "Search"}
      </button>
    </form>
  );
}
