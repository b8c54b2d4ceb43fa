// @ts-check
/**
 * Build the web explorer (SPEC §12) from web/ into dist/web/: one JavaScript and one CSS bundle with content
 * hashes in their names (esbuild), `index.html` pointing at them, and a `.gz` and `.br` of each file, which
 * the server sends as they are (src/api/routes/webApp.ts). Run by `scripts/build.js` (`npm install`), by the
 * browser tests before they start, and by `npm run build:web`.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const WEB_OUT = join(ROOT, "dist", "web");

/**
 * @param {{ outDir?: string }} [options]
 * @returns {Promise<{ outDir: string, files: string[] }>}
 */
export async function buildWeb(options = {}) {
  const outDir = options.outDir ?? WEB_OUT;
  const esbuild = await import("esbuild");
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(join(outDir, "assets"), { recursive: true });
  const result = await esbuild.build({
    entryPoints: { main: join(ROOT, "web", "main.tsx") },
    bundle: true,
    minify: true,
    format: "esm",
    target: ["es2022", "chrome110", "firefox115", "safari16"],
    jsx: "automatic",
    jsxImportSource: "preact",
    outdir: join(outDir, "assets"),
    entryNames: "[name]-[hash]",
    assetNames: "[name]-[hash]",
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => join(ROOT, path));
  const script = outputs.find((path) => path.endsWith(".js"));
  const style = outputs.find((path) => path.endsWith(".css"));
  if (!script || !style) throw new Error("buildWeb: esbuild wrote no script or no stylesheet");
  const template = readFileSync(join(ROOT, "web", "index.html"), "utf8");
  const html = template
    .replace("%SCRIPT%", `/assets/${basename(script)}`)
    .replace("%STYLE%", `/assets/${basename(style)}`);
  const index = join(outDir, "index.html");
  writeFileSync(index, html);
  const files = [index, ...outputs];
  for (const file of files) {
    const body = readFileSync(file);
    writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
    writeFileSync(
      `${file}.br`,
      brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
  }
  return { outDir, files };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { outDir, files } = await buildWeb();
  process.stdout.write(`build: web explorer in ${outDir} (${files.length} files)\n`);
}
