import { shortHex } from "../format.ts";
import { labelOf } from "../labels.ts";
import { Copy } from "./Copy.tsx";

/**
 * An address as a link: to its token page when it is a tracked token, else to its address page; named after
 * the configuration where it is known (`Router 0x5FbD…0aa3`), the whole address on hover, with a copy button.
 */
export function AddressLink({ address, copy = true }: { address: string | null; copy?: boolean }) {
  if (!address) return <span class="muted">contract creation</span>;
  const label = labelOf(address);
  const href = label?.kind === "token" ? `/token/${address}` : `/address/${address}`;
  return (
    <span class="hex">
      <a href={href} title={address}>
        {label && <span class="label">{label.name} </span>}
        <span class="mono">{shortHex(address).text}</span>
      </a>
      {copy && <Copy text={address} what="address" />}
    </span>
  );
}

/** A transaction hash as a link to its page, with a copy button. */
export function TxLink({ hash, copy = true }: { hash: string; copy?: boolean }) {
  return (
    <span class="hex">
      <a href={`/tx/${hash}`} title={hash} class="mono">
        {shortHex(hash, 10).text}
      </a>
      {copy && <Copy text={hash} what="transaction hash" />}
    </span>
  );
}

/** A transaction's status in words and a sign: colour is never the only signal. */
export function Status({ ok, testid }: { ok: boolean; testid?: string }) {
  return (
    <span class={ok ? "status ok" : "status failed"} data-testid={testid}>
      <span aria-hidden="true">{ok ? "✓ " : "✗ "}</span>
      {ok ? "Success" : "Failed"}
    </span>
  );
}

/** The arrow between sender and recipient, read out as "to". */
export function To() {
  return (
    <span>
      <span aria-hidden="true"> → </span>
      <span class="visually-hidden">to</span>
    </span>
  );
}
