// @ts-check
/**
 * The worker thread that runs PGlite for `createPgliteThread.ts` (see there for why). Plain JavaScript: a worker
 * does not inherit the TypeScript loader of its parent (tsx registered through its API, or vitest's transform),
 * and this file needs nothing but PGlite and its plain-JavaScript sibling `pgliteMissingFiles.js` (copied beside
 * it into the bundle by scripts/bundleCli.js).
 *
 * workerData: { dataDir, settings: ["name=value", …], snapshot?: ArrayBuffer, pgliteWasmModule,
 * initdbWasmModule (compiled by the parent), waitForStart?: open only after a first message }. Posts
 * { ready: true } once open (or
 * { ready: false, error }), then answers each request { id, op, ... } with { id, result } or { id, error }.
 * Ops: query { text, params, rowMode, raw: oids returned as text, copyData?: the bytes of a `COPY … FROM`
 * whose text ends before the file (copyFrom) }, exec { text, raw }, listen { channel },
 * unlisten { channel }, dump { compression }, close. NOTIFYs heard are posted as { channel, payload }.
 */
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, types } from "@electric-sql/pglite";
import { answerMissingFilesCheaply } from "./pgliteMissingFiles.js";

const port = /** @type {import("node:worker_threads").MessagePort} */ (parentPort);
/** @param {string} value */
const asText = (value) => value;

/** @param {unknown} error */
function serializeError(error) {
  if (!(error instanceof Error)) return { name: "Error", message: String(error), props: {} };
  /** @type {Record<string, string | number>} */
  const props = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === "string" || typeof value === "number") props[key] = value;
  }
  return { name: error.name, message: error.message, props };
}

/**
 * json and jsonb parameters given as bytes (UTF-8 text) are bound in binary format, which for json is the
 * text itself: PGlite copies them into the message instead of measuring and encoding a string character by
 * character (insertRows sends a whole group's rows as one such parameter). Anything else: PGlite's own.
 * @type {Record<number, (value: unknown) => unknown>}
 */
const jsonSerializers = {};
for (const oid of [types.JSON, types.JSONB]) {
  const serialize = types.serializers[oid];
  jsonSerializers[oid] = (value) => (value instanceof Uint8Array ? value : serialize(value));
}

/** @param {number[] | undefined} raw */
function rawParsers(raw) {
  /** @type {Record<number, (value: string) => string>} */
  const parsers = {};
  for (const oid of raw ?? []) parsers[oid] = asText;
  return parsers;
}

/** @type {PGlite} */
let pg;
try {
  const { dataDir, settings, snapshot, pgliteWasmModule, initdbWasmModule, waitForStart } = workerData;
  // Started while its data directory is being made (createPgliteThread's `after`): PGlite is loaded, and opens
  // the directory once the parent says it is complete.
  if (waitForStart) await new Promise((resolve) => port.once("message", resolve));
  /** @type {string[]} */
  const startParams = [...PGlite.defaultStartParams];
  for (const setting of settings) startParams.push("-c", setting);
  pg = await PGlite.create(dataDir, {
    // node-postgres returns int8 as a string; PGlite would return a lossy number.
    parsers: { [types.INT8]: asText },
    startParams,
    pgliteWasmModule,
    initdbWasmModule,
    ...(snapshot ? { loadDataDir: new Blob([snapshot]) } : {}),
  });
  if (!String(dataDir).startsWith("memory://")) answerMissingFilesCheaply(pg.Module);
  port.postMessage({ ready: true });
} catch (error) {
  port.postMessage({ ready: false, error: serializeError(error) });
  process.exit(0);
}

/** @type {Map<string, () => Promise<void>>} */
const unlisten = new Map();

/**
 * `<text> '<file>'`: COPY … FROM a file of PostgreSQL's in-memory file system (outside the data directory)
 * that holds `data`, removed afterwards. The file takes the bytes as they are (`canOwn`) and COPY reads them
 * in blocks: PGlite's own `/dev/blob` copies a Blob twice and then reads it byte by byte in JavaScript (about
 * 0.1 s of a 10,000-transaction backfill), and its copies kept the worker's memory high.
 * @param {number} id the request's id: its file's name (requests interleave while PGlite queues them)
 * @param {string} text
 * @param {Uint8Array} data
 * @param {import("@electric-sql/pglite").QueryOptions} options
 */
async function copyFrom(id, text, data, options) {
  const file = `/tmp/protoscan-copy-${id}`;
  pg.Module.FS.writeFile(file, data, { canOwn: true });
  try {
    return await pg.query(`${text} '${file}'`, [], options);
  } finally {
    pg.Module.FS.unlink(file);
  }
}

/**
 * Why the last BEGIN failed, until its transaction's ROLLBACK (or COMMIT) comes. The client sends a
 * transaction's statements without waiting for its BEGIN (createPgliteThread.ts): they are refused, so that
 * none runs outside the transaction it was meant for.
 * @type {unknown}
 */
let failedBegin;
const ENDS = /^(ROLLBACK|COMMIT)$/;

port.on("message", async (message) => {
  const { id, op } = message;
  try {
    if (failedBegin !== undefined) {
      if (op === "exec" && ENDS.test(message.text)) failedBegin = undefined;
      else if (op === "query" || op === "exec") {
        const reason = failedBegin instanceof Error ? failedBegin.message : String(failedBegin);
        throw new Error(`not run: the transaction's BEGIN failed (${reason})`);
      }
    }
    if (op === "query") {
      const options = {
        rowMode: message.rowMode,
        parsers: rawParsers(message.raw),
        serializers: jsonSerializers,
      };
      const result = message.copyData
        ? await copyFrom(id, message.text, message.copyData, options)
        : await pg.query(message.text, message.params, options);
      port.postMessage({ id, result });
    } else if (op === "exec") {
      const result = await pg.exec(message.text, { parsers: rawParsers(message.raw) }).catch((error) => {
        if (message.text === "BEGIN") failedBegin = error;
        throw error;
      });
      port.postMessage({ id, result });
    } else if (op === "listen") {
      const { channel } = message;
      if (!unlisten.has(channel)) {
        unlisten.set(channel, await pg.listen(channel, (payload) => port.postMessage({ channel, payload })));
      }
      port.postMessage({ id, result: null });
    } else if (op === "unlisten") {
      await unlisten.get(message.channel)?.();
      unlisten.delete(message.channel);
      port.postMessage({ id, result: null });
    } else if (op === "dump") {
      const file = await pg.dumpDataDir(message.compression);
      const buffer = await file.arrayBuffer();
      port.postMessage({ id, result: buffer }, [buffer]);
    } else if (op === "close") {
      if (!pg.closed) await pg.close();
      port.postMessage({ id, result: null });
      port.close();
    } else throw new Error(`unknown op ${op}`);
  } catch (error) {
    port.postMessage({ id, error: serializeError(error) });
  }
});
