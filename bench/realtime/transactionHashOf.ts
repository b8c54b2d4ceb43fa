const PREFIX = Buffer.from('{"type":"transaction"');
const KEY = Buffer.from('"txHash":"');
const HASH_LENGTH = 66;

/**
 * The `data.txHash` of a `transaction` message (SPEC §5) read straight from the frame's bytes, or null for
 * any other message. Benchmark clients receive 50,000 messages a second between them: finding the hash
 * without decoding and parsing the whole JSON keeps the clients' CPU (which competes with the server's on
 * the same machine) small. The hub writes `{"type":"transaction","topic":…,"data":{"txHash":"0x…",…}}`, and
 * the Transaction JSON has no other `txHash` before its own (its nested objects come after it).
 */
export function transactionHashOf(frame: Buffer): string | null {
  if (frame.length < PREFIX.length || frame.compare(PREFIX, 0, PREFIX.length, 0, PREFIX.length) !== 0) {
    return null;
  }
  const at = frame.indexOf(KEY, PREFIX.length);
  if (at < 0 || at + KEY.length + HASH_LENGTH > frame.length) return null;
  const hash = frame.toString("latin1", at + KEY.length, at + KEY.length + HASH_LENGTH);
  return /^0x[0-9a-f]{64}$/.test(hash) ? hash : null;
}
