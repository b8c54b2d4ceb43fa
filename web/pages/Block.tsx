import { api, type Tx } from "../api.ts";
import { Empty, Failed, Loading } from "../components/States.tsx";
import { TxList } from "../components/TxList.tsx";
import { formatInteger, formatTime } from "../format.ts";
import { useAsync } from "../useAsync.ts";

type BlockView = { hash: string | null; timestamp: string | null; txs: Tx[] };

/** `/block/:number` (SPEC §12): the block's stored transactions (through the search endpoint, row 12). */
export function BlockPage({ number }: { number: string }) {
  const block = useAsync(async (): Promise<BlockView> => {
    const { results } = await api.search(number);
    const found = results.find((r) => r.type === "block" && String(r.blockNumber) === number);
    if (found?.type !== "block") return { hash: null, timestamp: null, txs: [] };
    const txs = await Promise.all(found.transactions.slice(0, 100).map((hash) => api.tx(hash)));
    return { hash: found.blockHash, timestamp: found.blockTimestamp, txs };
  }, [number]);
  const n = Number(number);
  return (
    <>
      <h1>Block {formatInteger(number)}</h1>
      <nav class="pager" aria-label="blocks">
        {n > 0 && <a href={`/block/${n - 1}`}>« Block {n - 1}</a>}
        <a href={`/block/${n + 1}`}>Block {n + 1} »</a>
      </nav>
      {block.state === "ok" && (block.data.hash || block.data.timestamp) && (
        <dl class="facts panel">
          {block.data.hash && (
            <>
              <dt>Hash</dt>
              <dd class="mono break">{block.data.hash}</dd>
            </>
          )}
          {block.data.timestamp && (
            <>
              <dt>Time</dt>
              <dd>{formatTime(block.data.timestamp)}</dd>
            </>
          )}
        </dl>
      )}
      <section class="panel" aria-labelledby="block-txs">
        <h2 id="block-txs">Stored transactions</h2>
        {block.state === "loading" && <Loading what="the block's transactions" />}
        {block.state === "error" && <Failed what="the block's transactions" error={block.error} />}
        {block.state === "ok" && block.data.txs.length === 0 && (
          <Empty>protoscan stored no transaction of the configured protocols in this block.</Empty>
        )}
        {block.state === "ok" && block.data.txs.length > 0 && <TxList txs={block.data.txs} />}
      </section>
    </>
  );
}
