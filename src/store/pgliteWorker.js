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
import { PGlite, parse, protocol, types } from "@electric-sql/pglite";
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

/**
 * The parsers of a statement whose `raw` types are returned as text: PGlite's own with those replaced, built
 * once per distinct list and kept (a client asks with one or two lists: Drizzle's, and none).
 *
 * Why kept: PGlite's `parseResults(messages, parsers, options)` spreads `{...parsers, ...options.parsers}` on
 * every call that has `options.parsers`. Its parsers hold 318 types keyed by OID, and that spread cost about
 * 200 µs per statement, more than PostgreSQL's own work for a `select 1` (docs/performance.md, "The
 * 2026-11-28 fourth session"). Given as the base parsers, with no `options.parsers`, nothing is copied.
 * @type {Map<string, Record<number, (value: string, typeId?: number) => unknown>>}
 */
const parsersByRaw = new Map();

/** @param {number[] | undefined} raw */
function parsersFor(raw) {
  if (!raw || raw.length === 0) return pg.parsers;
  const key = raw.join(",");
  let parsers = parsersByRaw.get(key);
  if (!parsers) {
    parsers = { ...pg.parsers };
    for (const oid of raw) parsers[oid] = asText;
    parsersByRaw.set(key, parsers);
  }
  return parsers;
}

/**
 * PGlite's `exec` options (the `exec` op: BEGIN, COMMIT, migrations; every `query` goes through
 * `runStatement`) for text whose `raw` types are returned as text: `parsers` only when there is one (PGlite
 * copies its whole table of parsers per statement when there is, see `parsersFor`).
 * @param {number[] | undefined} raw
 */
function rawOptions(raw) {
  if (!raw || raw.length === 0) return {};
  /** @type {Record<number, (value: string) => string>} */
  const parsers = {};
  for (const oid of raw) parsers[oid] = asText;
  return { parsers };
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
 * @param {number[] | undefined} raw
 * @param {"array" | "object" | undefined} rowMode
 */
async function copyFrom(id, text, data, raw, rowMode) {
  const file = `/tmp/protoscan-copy-${id}`;
  pg.Module.FS.writeFile(file, data, { canOwn: true });
  try {
    return await runStatement(`${text} '${file}'`, [], raw, rowMode, true);
  } finally {
    pg.Module.FS.unlink(file);
  }
}

/**
 * Statements kept prepared, by text, least recently used first. PGlite's `query` sends each statement as an
 * unnamed one: parsed, analyzed and planned on every call, in six round trips through the engine. Here a
 * statement is parsed once under a name (as node-postgres does for a named query, postgres.js and pgx for
 * every one), then each call binds and executes it in one round trip, and PostgreSQL plans it once for all
 * calls when a generic plan costs no more than the custom ones it made for the first five. A cold
 * `GET /api/tx/:hash` batch spent a quarter of its statement's time planning it (docs/performance.md, "The
 * 2026-11-27 fifth session").
 * @type {Map<string, { name: string, paramTypes: number[], rowDescription: import("@electric-sql/pglite").messages.BackendMessage | undefined }>}
 */
const prepared = new Map();
/** Prepared statements kept at most: more than the API's distinct read statements. */
const MAX_PREPARED = 256;
let nextStatement = 0;

/** @param {Uint8Array[]} parts */
function concat(...parts) {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Send extended-protocol `messages` and a Sync in one round trip; the caller holds the exclusive lock and syncs
 * the file system once its statement is done.
 * @param {Uint8Array[]} messages
 */
function execWithSync(...messages) {
  return pg.execProtocol(concat(...messages, protocol.serialize.sync()), { syncToFs: false });
}

/** @param {string} name a prepared statement to deallocate */
function closeStatement(name) {
  return execWithSync(protocol.serialize.close({ type: "S", name }));
}

/**
 * `pg.query(text, params, options)` in two round trips through the engine at most, one when the statement is
 * prepared already: PGlite's `query` takes six, and copies its table of parsers (`parsersFor`).
 *
 * Outside a transaction a statement is prepared under a name (see `prepared`) and kept. Statements first met
 * inside a transaction, and those given `unnamed`, use the unnamed statement instead: those are the writer's,
 * each carrying a whole group of rows (or a COPY of its own file), where planning is nothing next to the work
 * and a kept plan only takes memory. When a kept statement's result type changed under it (a migration
 * altered a table it reads), it is dropped and the query runs unnamed; it is prepared again next time.
 * @param {string} text
 * @param {unknown[]} params
 * @param {number[] | undefined} raw types returned as text (`parsersFor`)
 * @param {"array" | "object" | undefined} rowMode
 * @param {boolean} [unnamed] never prepare this text under a name
 */
async function runStatement(text, params, raw, rowMode, unnamed = false) {
  const result = await pg._runExclusiveQuery(async () => {
    let statement = unnamed ? undefined : prepared.get(text);
    if (statement) {
      prepared.delete(text);
    } else if (unnamed || pg.isInTransaction()) {
      statement = await describeStatement("", text);
    } else {
      statement = await describeStatement(`protoscan_${nextStatement++}`, text);
      if (prepared.size >= MAX_PREPARED) {
        const [oldest, { name: dropped }] = prepared.entries().next().value;
        prepared.delete(oldest);
        await closeStatement(dropped);
      }
    }
    if (statement.name !== "") prepared.set(text, statement);
    try {
      return await bindAndExecute(statement, params, raw, rowMode);
    } catch (error) {
      if (statement.name === "" || !CHANGED_RESULT_TYPE.test(error instanceof Error ? error.message : "")) {
        throw error;
      }
      prepared.delete(text);
      await closeStatement(statement.name);
      return bindAndExecute(await describeStatement("", text), params, raw, rowMode);
    }
  });
  await pg.syncToFs();
  return result;
}

/**
 * Parse `text` as the statement `name` ("" for the unnamed one) and read its parameter and result types.
 * @param {string} name
 * @param {string} text
 */
async function describeStatement(name, text) {
  const { messages } = await execWithSync(
    protocol.serialize.parse({ name, text }),
    protocol.serialize.describe({ type: "S", name }),
  );
  return {
    name,
    paramTypes: parse.parseDescribeStatementResults(messages),
    rowDescription: messages.find((message) => message.name === "rowDescription"),
  };
}

/**
 * Bind `params` to a parsed statement, execute it and parse its rows.
 * @param {{ name: string, paramTypes: number[], rowDescription: import("@electric-sql/pglite").messages.BackendMessage | undefined }} statement
 * @param {unknown[]} params
 * @param {number[] | undefined} raw
 * @param {"array" | "object" | undefined} rowMode
 */
async function bindAndExecute(statement, params, raw, rowMode) {
  const { name, paramTypes, rowDescription } = statement;
  const values = params.map((param, i) => {
    if (param === null || param === undefined) return null;
    const oid = /** @type {number} */ (paramTypes[i]);
    const serialize = jsonSerializers[oid] ?? pg.serializers[oid];
    return serialize ? serialize(param) : String(param);
  });
  const { messages } = await execWithSync(
    protocol.serialize.bind({ statement: name, values: /** @type {any[]} */ (values) }),
    protocol.serialize.execute({}),
  );
  return parse.parseResults(rowDescription ? [rowDescription, ...messages] : messages, parsersFor(raw), {
    rowMode,
  })[0];
}
const CHANGED_RESULT_TYPE = /cached plan must not change result type/;

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
      const { text, raw, rowMode } = message;
      const result = message.copyData
        ? await copyFrom(id, text, message.copyData, raw, rowMode)
        : await runStatement(text, message.params ?? [], raw, rowMode);
      port.postMessage({ id, result });
    } else if (op === "exec") {
      const result = await pg.exec(message.text, rawOptions(message.raw)).catch((error) => {
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
