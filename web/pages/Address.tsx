import { type AddressView, api, csv, type TokenDetailJson } from "../api.ts";
import { Copy } from "../components/Copy.tsx";
import { Select } from "../components/Select.tsx";
import { Empty, Failed, Loading } from "../components/States.tsx";
import { Fmt } from "../components/Text.tsx";
import { TokenLogo } from "../components/TokenLogo.tsx";
import { TxSection } from "../components/TxSection.tsx";
import { formatEther, formatInteger, formatUnits, formatUsd } from "../format.ts";
import { labelOf, protocolNames } from "../labels.ts";
import { here } from "../router.ts";
import { useAsync } from "../useAsync.ts";

type Loaded = { view: AddressView; prices: Map<string, TokenDetailJson> };

/** `/address/:address` (SPEC §12): native balance, token balances with USD, transactions, CSV downloads. */
export function AddressPage({ address }: { address: string }) {
  const cursor = here.value.query.get("cursor");
  const protocol = here.value.query.get("protocol");
  const loaded = useAsync(async (): Promise<Loaded> => {
    const view = await api.address(address);
    const details = await Promise.all(
      view.tokenBalances.map((b) => api.token(b.contractAddress).catch(() => null)),
    );
    return {
      view,
      prices: new Map(details.filter((d) => d !== null).map((d) => [d.address.toLowerCase(), d])),
    };
  }, [address]);
  const page = useAsync(
    () => api.addressTransactions(address, cursor, protocol),
    [address, cursor, protocol],
  );
  const label = labelOf(address);
  return (
    <>
      <h1>{label ? `${label.name} (${label.kind === "contract" ? "contract" : "token"})` : "Address"}</h1>
      <p class="hex hash-line">
        <span class="mono break">{address}</span>
        <Copy text={address} what="address" />
      </p>
      {loaded.state === "loading" && <Loading what="the address" />}
      {loaded.state === "error" && <Failed what="the address" error={loaded.error} />}
      {loaded.state === "ok" && <Summary loaded={loaded.data} />}
      <TxSection
        title="Transactions"
        page={page}
        cursor={cursor}
        empty="No stored transaction involves this address."
        filter={
          <Select
            label="Protocol"
            param="protocol"
            value={protocol}
            options={[...protocolNames.value].map(([id, name]) => ({ value: id, label: name }))}
          />
        }
      />
      <p class="downloads">
        Download CSV:{" "}
        <a href={csv.addressTransactions(address)} download>
          transactions
        </a>{" "}
        ·{" "}
        <a href={csv.addressTransfers(address)} download>
          token transfers
        </a>
      </p>
    </>
  );
}

function Summary({ loaded }: { loaded: Loaded }) {
  const { view, prices } = loaded;
  const label = labelOf(view.address);
  return (
    <>
      <dl class="facts panel">
        <dt>Balance</dt>
        <dd>
          <Fmt value={formatEther(view.balance)} testid="address-balance" />
        </dd>
        <dt>Kind</dt>
        <dd>
          {view.isContract ? "Contract" : "Account (no code)"}
          {label && ` — ${label.name} in the configuration`}
        </dd>
        <dt>Transactions</dt>
        <dd>{formatInteger(view.transactionCount)} stored</dd>
      </dl>
      <section class="panel" aria-labelledby="balances-title">
        <h2 id="balances-title">Token balances</h2>
        {view.tokenBalances.length === 0 ? (
          <Empty>No balance of a tracked token.</Empty>
        ) : (
          <ul class="rows">
            {view.tokenBalances.map((b) => {
              const price = prices.get(b.contractAddress.toLowerCase())?.priceUsd ?? null;
              const whole = Number(formatUnits(b.tokenBalance, b.decimals, 18).exact.replace(/,/g, ""));
              return (
                <li
                  key={b.contractAddress}
                  class="row"
                  data-testid="token-balance-row"
                  data-token={b.contractAddress}
                >
                  <TokenLogo address={b.contractAddress} />
                  <a href={`/token/${b.contractAddress}`}>
                    {b.name} ({b.symbol})
                  </a>
                  <span class="amount">
                    <Fmt value={formatUnits(b.tokenBalance, b.decimals)} /> {b.symbol}
                  </span>
                  <Fmt value={formatUsd(price === null ? null : whole * price)} />
                </li>
              );
            })}
          </ul>
        )}
      </section>
    </>
  );
}
