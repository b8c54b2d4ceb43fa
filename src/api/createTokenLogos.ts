import type { TokenConfig } from "../config/schema.ts";
import type { Logger } from "../internal/logger.ts";

/** A logo as served from protoscan's own origin. */
export type Logo = { body: Buffer; contentType: string };

export type TokenLogos = {
  /** The token's configured logo (fetched once, kept), else a badge of its colour and symbol; null: not tracked. */
  get(address: string): Promise<Logo | null>;
};

const MAX_BYTES = 256 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
/** A logo that could not be had is tried again after this long (the badge stands in meanwhile). */
const RETRY_AFTER_MS = 10 * 60_000;
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml", "image/x-icon"];

/**
 * The logos of the tracked tokens (SPEC §12): the explorer loads nothing from another origin, so the server
 * fetches each configured `logo` URL once (http(s) only, at most 256 KB, an image content type, 5 s), keeps it
 * in memory and serves it itself. Where it cannot be had (no URL, a failure, not an image), an SVG badge drawn
 * from the token's `color` and `symbol` is served instead, and the fetch is retried after 10 minutes.
 */
export function createTokenLogos(tokens: readonly TokenConfig[], logger: Logger): TokenLogos {
  const byAddress = new Map(tokens.map((t) => [t.address.toLowerCase(), t]));
  const fetched = new Map<string, Logo>();
  const failedAt = new Map<string, number>();
  const inFlight = new Map<string, Promise<Logo | null>>();

  const fetchLogo = async (token: TokenConfig): Promise<Logo | null> => {
    try {
      if (!/^https?:\/\//i.test(token.logo)) return null;
      const response = await fetch(token.logo, {
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        redirect: "follow",
      });
      const contentType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
      if (!response.ok || !IMAGE_TYPES.includes(contentType)) {
        throw new Error(`answered ${response.status} ${contentType || "without a content type"}`);
      }
      const body = Buffer.from(await response.arrayBuffer());
      if (body.length === 0 || body.length > MAX_BYTES) throw new Error(`${body.length} bytes`);
      return { body, contentType };
    } catch (error) {
      logger.warn(
        { token: token.address, reason: error instanceof Error ? error.message : String(error) },
        "token logo could not be fetched; a badge stands in",
      );
      return null;
    }
  };

  return {
    async get(address) {
      const key = address.toLowerCase();
      const token = byAddress.get(key);
      if (!token) return null;
      const kept = fetched.get(key);
      if (kept) return kept;
      const failed = failedAt.get(key);
      if (token.logo !== "" && (failed === undefined || Date.now() - failed > RETRY_AFTER_MS)) {
        let pending = inFlight.get(key);
        if (!pending) {
          pending = fetchLogo(token).finally(() => inFlight.delete(key));
          inFlight.set(key, pending);
        }
        const logo = await pending;
        if (logo) {
          fetched.set(key, logo);
          return logo;
        }
        failedAt.set(key, Date.now());
      }
      return badge(token);
    },
  };
}

/** A round badge in the token's colour with up to four letters of its symbol (XML-escaped). */
export function badge(token: Pick<TokenConfig, "color" | "symbol">): Logo {
  const color = /^#[0-9a-fA-F]{6}$/.test(token.color) ? token.color : "#888888";
  const text = [...token.symbol]
    .slice(0, 4)
    .join("")
    .replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const r = Number.parseInt(color.slice(1, 3), 16);
  const g = Number.parseInt(color.slice(3, 5), 16);
  const b = Number.parseInt(color.slice(5, 7), 16);
  const ink = 0.299 * r + 0.587 * g + 0.114 * b > 150 ? "#111111" : "#ffffff";
  const size = text.length > 3 ? 18 : 22;
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">` +
    `<circle cx="32" cy="32" r="32" fill="${color}"/>` +
    `<text x="32" y="32" dy="0.35em" text-anchor="middle" font-family="system-ui,sans-serif" ` +
    `font-weight="700" font-size="${size}" fill="${ink}">${text}</text></svg>`;
  return { body: Buffer.from(svg), contentType: "image/svg+xml" };
}
