import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join, relative } from "node:path";

/** One built file of the web explorer, with its pre-compressed variants when the build wrote them. */
export type WebAsset = {
  body: Buffer;
  gzip?: Buffer;
  brotli?: Buffer;
  contentType: string;
  /** its name carries a content hash (`main-3F2A9C1B.js`): cached for a year, never revalidated */
  immutable: boolean;
};

/** The built explorer: `index.html` and the files under `assets/`, by URL path (`/assets/main-….js`). */
export type WebAssets = { index: WebAsset; files: Map<string, WebAsset> };

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
};

const HASHED = /-[A-Z0-9]{8,}\.[a-z]+$/;

/**
 * Read the explorer built by `scripts/buildWeb.js` (a few hundred KB) into memory once: every request is then
 * a map lookup. Null when it was not built (`npm install --omit=dev` on a tree without it).
 */
export function loadWebAssets(root: string): WebAssets | null {
  const indexPath = join(root, "index.html");
  if (!existsSync(indexPath)) return null;
  const read = (path: string): WebAsset => {
    const gzip = existsSync(`${path}.gz`) ? readFileSync(`${path}.gz`) : undefined;
    const brotli = existsSync(`${path}.br`) ? readFileSync(`${path}.br`) : undefined;
    return {
      body: readFileSync(path),
      ...(gzip && { gzip }),
      ...(brotli && { brotli }),
      contentType: TYPES[extname(path)] ?? "application/octet-stream",
      immutable: HASHED.test(path),
    };
  };
  const files = new Map<string, WebAsset>();
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.endsWith(".gz") || entry.name.endsWith(".br")) continue;
    const path = join(entry.parentPath, entry.name);
    const url = `/${relative(root, path).split("\\").join("/")}`;
    if (url === "/index.html") continue;
    files.set(url, read(path));
  }
  return { index: read(indexPath), files };
}

/** The variant of `asset` to send for an `Accept-Encoding` header: brotli, then gzip, then identity. */
export function pickEncoding(
  asset: WebAsset,
  acceptEncoding: string | undefined,
): { body: Buffer; encoding: "br" | "gzip" | null } {
  const accepted = (acceptEncoding ?? "")
    .toLowerCase()
    .split(",")
    .map((part) => part.trim())
    .filter((part) => !/;\s*q=0(\.0*)?$/.test(part))
    .map((part) => part.split(";")[0]!.trim());
  if (asset.brotli && accepted.includes("br")) return { body: asset.brotli, encoding: "br" };
  if (asset.gzip && (accepted.includes("gzip") || accepted.includes("*")))
    return { body: asset.gzip, encoding: "gzip" };
  return { body: asset.body, encoding: null };
}
