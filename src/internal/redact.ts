/**
 * Remove credentials from URLs before they reach a log line, an error or a metric label
 * (after viem `errors/utils.ts` `getUrl`). Handles `user:pass@` userinfo, API keys in the path
 * (Alchemy `/v2/<key>`, Infura `/v3/<key>`, QuickNode `/<token>/`) and key-looking query parameters.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "[invalid url]";
  }
  if (parsed.username || parsed.password) {
    parsed.username = "***";
    parsed.password = "";
  }
  // Any path segment that looks like a secret (long token of letters, digits, - and _) is masked.
  parsed.pathname = parsed.pathname
    .split("/")
    .map((segment) => (/^[A-Za-z0-9_-]{16,}$/.test(segment) ? "***" : segment))
    .join("/");
  for (const key of [...parsed.searchParams.keys()]) {
    if (/key|token|secret|auth|pass|sig/i.test(key)) parsed.searchParams.set(key, "***");
  }
  return parsed.toString();
}

/**
 * Replace every occurrence of the given secrets (RPC URLs and their credential parts, signing keys,
 * API keys) in a free-form string. Used on messages that may quote a URL, e.g. fetch errors.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    out = out.split(secret).join("***");
  }
  return out;
}

/**
 * The parts of a URL that are secret: the whole URL, its userinfo (and the `Authorization: Basic` value it
 * is sent as, which a provider's error page may quote), long path segments, key-like params.
 */
export function secretsOfUrl(url: string): string[] {
  const secrets = [url];
  try {
    const parsed = new URL(url);
    if (parsed.password) secrets.push(parsed.password, decodeURIComponent(parsed.password));
    if (parsed.username) secrets.push(parsed.username);
    if (parsed.username || parsed.password) {
      const userinfo = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
      secrets.push(Buffer.from(userinfo).toString("base64"));
    }
    for (const segment of parsed.pathname.split("/")) {
      if (/^[A-Za-z0-9_-]{16,}$/.test(segment)) secrets.push(segment);
    }
    for (const [key, value] of parsed.searchParams) {
      if (/key|token|secret|auth|pass|sig/i.test(key)) secrets.push(value);
    }
  } catch {
    // not a URL: the whole string is the secret
  }
  return secrets.filter((s) => s.length >= 4);
}
