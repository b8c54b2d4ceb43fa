// Exact provider error messages (SPEC §3.1; provider docs and public issue trackers), shared by the
// classifier's unit tests and the tests that serve them through the RPC proxy.

export const ALCHEMY_RATE =
  "Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message. If not, check out https://docs.alchemy.com/reference/throughput";
export const ALCHEMY_LOGS =
  "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x0, 0x1f3f]";
export const INFURA_LOGS = "query returned more than 10000 results. Try with this block range [0x1, 0x2f].";
export const INFURA_RATE = "project ID request rate exceeded";
export const QUICKNODE_RANGE = "eth_getLogs is limited to a 10,000 range";
export const QUICKNODE_RATE =
  "10/second request limit reached - reduce calls per second or upgrade your account at quicknode.com";
export const BASE_RATE = "over rate limit";
/** Base's public endpoint quoting its upstream's 429 inside a -32000. */
export const BASE_RATE_QUOTED =
  '429 Too Many Requests: {"jsonrpc":"2.0","error":{"code":-32016,"message":"over rate limit"},"id":2239375}\n';
/** The JSON body Alchemy sends with HTTP 429. */
export const ALCHEMY_RATE_BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  error: { code: 429, message: ALCHEMY_RATE },
});
