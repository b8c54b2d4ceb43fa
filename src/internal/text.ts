/**
 * PostgreSQL's `text` and `jsonb` cannot hold U+0000 ("invalid byte sequence for encoding UTF8: 0x00"), while
 * an EVM `string` can carry any byte. Free text that reaches the store from outside (decoded ABI strings,
 * webhook error texts) passes through here, and the NUL characters are dropped, as Ponder and MUD do
 * (ponder-sh/ponder#1378): otherwise one transaction calling a protocol with such a string would stop the
 * indexer on every retry. The exact bytes of an event's arguments stay in its stored log `data`.
 */
export function withoutNul(text: string): string {
  return text.includes("\0") ? text.replaceAll("\0", "") : text;
}
