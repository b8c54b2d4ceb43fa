import { useEffect, useRef, useState } from "preact/hooks";
import { api, type FeedState, followLive, type RequestError, type Tx } from "../api.ts";
import { Empty, Failed, Loading } from "./States.tsx";
import { TxList } from "./TxList.tsx";

const ROWS = 25;

const newestFirst = (a: Tx, b: Tx) =>
  b.blockNumber - a.blockNumber || b.transactionIndex - a.transactionIndex;

/** `rows` with `incoming` merged in: newest first, each hash once, at most ROWS. */
export function mergeNewest(rows: readonly Tx[], incoming: readonly Tx[]): Tx[] {
  const byHash = new Map(rows.map((tx) => [tx.txHash, tx]));
  for (const tx of incoming) byHash.set(tx.txHash, tx);
  return [...byHash.values()].sort(newestFirst).slice(0, ROWS);
}

/**
 * The latest transactions, live (`live-feed`, SPEC §12): the newest 25 from the API, then every transaction
 * the WebSocket announces (topic `transactions`), or, while the socket is refused, what polling finds. Rows
 * arriving faster than the screen draws are merged once per frame, so a burst never drops frames and the
 * newest always show; a transaction a reorg removed leaves the list. The state ("Live" / "Reconnecting") is
 * shown in words.
 */
export function LiveFeed() {
  const [rows, setRows] = useState<Tx[] | null>(null);
  const [error, setError] = useState<RequestError | null>(null);
  const [state, setState] = useState<FeedState>("connecting");
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const pending = useRef<Tx[]>([]);
  const frame = useRef<number | null>(null);

  useEffect(() => {
    let active = true;
    const flush = () => {
      frame.current = null;
      const incoming = pending.current;
      pending.current = [];
      setRows((current) => mergeNewest(current ?? [], incoming));
      setFresh(new Set(incoming.map((tx) => tx.txHash)));
    };
    const queue = (txs: readonly Tx[]) => {
      pending.current.push(...txs);
      frame.current ??= requestAnimationFrame(flush);
    };
    api.recent(ROWS).then(
      (r) => active && setRows((current) => mergeNewest(current ?? [], r.transactions)),
      (e: RequestError) => active && setError(e),
    );
    const stop = followLive({
      topic: "transactions",
      onTransaction: (tx) => queue([tx]),
      onRemoved: (hash) => {
        pending.current = pending.current.filter((tx) => tx.txHash !== hash);
        setRows((current) => (current === null ? null : current.filter((tx) => tx.txHash !== hash)));
      },
      onPoll: (txs) => {
        setError(null);
        setRows((current) => mergeNewest(current ?? [], txs));
      },
      onState: setState,
    });
    return () => {
      active = false;
      stop();
      if (frame.current !== null) cancelAnimationFrame(frame.current);
    };
  }, []);

  return (
    <section class="panel" data-testid="live-feed" aria-labelledby="feed-title">
      <header class="panel-head">
        <h2 id="feed-title">Latest transactions</h2>
        <span class={`feed-state feed-${state}`} role="status" data-state={state}>
          <span aria-hidden="true">{state === "live" ? "● " : "○ "}</span>
          {state === "live" ? "Live" : state === "connecting" ? "Connecting…" : "Reconnecting… (polling)"}
        </span>
      </header>
      {rows === null && error === null && <Loading what="the latest transactions" />}
      {rows === null && error !== null && <Failed what="the latest transactions" error={error} />}
      {rows !== null && rows.length === 0 && <Empty>No transaction stored yet.</Empty>}
      {rows !== null && rows.length > 0 && <TxList txs={rows} fresh={fresh} />}
    </section>
  );
}
