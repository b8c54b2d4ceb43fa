import type { IngestEvent } from "../ingest/broadcaster.ts";
import { encodeAddressTransactions } from "../store/encode.ts";

/**
 * The canonical topics an ingest event matches (SPEC §5), each once: `transactions`, its protocol, every
 * party (the same set endpoint 14 lists it under: sender, recipient, created contract and token-transfer
 * parties, never the zero address) and every tracked token it transferred. A `removed` event matches what
 * the removed transaction matched when it was stored.
 */
export function eventTopics(event: IngestEvent): string[] {
  let protocol: string;
  let parties: readonly string[];
  let tokens: readonly string[];
  if (event.type === "transaction") {
    const tx = event.transaction;
    protocol = tx.protocol;
    // The rows endpoint 14 reads, so the two sets cannot drift apart.
    parties = encodeAddressTransactions(tx).map((row) => row.address);
    tokens = tx.transfers.map((t) => t.token);
  } else {
    protocol = event.removed.protocol;
    parties = event.removed.parties;
    tokens = event.removed.tokens;
  }
  return topicsOf(protocol, parties, tokens);
}

/**
 * The topics of a transaction attributed to `protocol`, with these parties and transferred tracked tokens:
 * what `eventTopics` answers, for callers that hold stored rows instead of an ingest event.
 */
export function topicsOf(protocol: string, parties: readonly string[], tokens: readonly string[]): string[] {
  const topics = new Set<string>(["transactions", `protocol:${protocol}`]);
  for (const address of parties) topics.add(`address:${address.toLowerCase()}`);
  for (const token of tokens) topics.add(`token:${token.toLowerCase()}`);
  return [...topics];
}
