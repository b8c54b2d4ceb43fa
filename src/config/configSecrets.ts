import { secretsOfUrl } from "../internal/redact.ts";
import type { Config } from "./schema.ts";

/**
 * Every secret a config holds, for the logger's redaction (SPEC §8: secrets never appear in logs, errors or
 * metrics): each RPC URL and its credential parts (userinfo, key-looking path segments and query
 * parameters), Alchemy signing keys, QuickNode security tokens, the price API key and the credential parts
 * of its base URL, and the track-tx API keys.
 *
 * De-duplicated, longest first (so a URL is masked whole before its parts), without strings shorter than
 * 4 characters, which `redactSecrets` ignores anyway.
 */
export function configSecrets(config: Config): string[] {
  const secrets: string[] = [];
  for (const url of config.rpc.urls) secrets.push(...secretsOfUrl(url));
  secrets.push(...(config.webhooks.alchemy?.signingKeys ?? []));
  secrets.push(...(config.webhooks.quicknode?.securityTokens ?? []));
  const api = config.prices.api;
  if (api?.apiKey !== undefined) secrets.push(api.apiKey);
  // The base URL itself is public (https://api.g.alchemy.com); only credentials inside it are secret.
  if (api?.baseUrl !== undefined) secrets.push(...secretsOfUrl(api.baseUrl).slice(1));
  secrets.push(...config.api.trackTxApiKeys);
  secrets.push(...config.api.etherscanApiKeys);
  return [...new Set(secrets)].filter((secret) => secret.length >= 4).sort((a, b) => b.length - a.length);
}
