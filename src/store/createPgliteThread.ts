import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { QueryOptions, Results, Transaction } from "@electric-sql/pglite";

/**
 * The part of PGlite's client protoscan uses (Drizzle's PGlite driver and migrator, the test helpers), served
 * by PGlite running in a worker thread.
 */
export type PgliteClient = {
  readonly closed: boolean;
  query<T>(query: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  exec(query: string, options?: QueryOptions): Promise<Results[]>;
  transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Run `fn` while no other statement or transaction may start. */
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** PGlite's LISTEN: `callback` gets each NOTIFY payload on `channel`; resolves to the UNLISTEN. */
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  /** The data directory as an uncompressed tarball (PGlite's `dumpDataDir`), for `loadDataDir`. */
  dumpDataDir(compression?: "none" | "gzip" | "auto"): Promise<Blob>;
  close(): Promise<void>;
};

type SerializedError = { name: string; message: string; props: Record<string, string | number> };
type Reply =
  | { id: number; result?: unknown; error?: SerializedError }
  | { id?: undefined; channel: string; payload: string };
type Ready = { ready: true } | { ready: false; error: SerializedError };

const WORKER = new URL("./pgliteWorker.js", import.meta.url);

/** A compiled `WebAssembly.Module` (the global is not in this project's TypeScript lib). */
type WasmModule = object;
type WasmModules = { pgliteWasmModule: WasmModule; initdbWasmModule: WasmModule };
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } })
  .WebAssembly;
let compiled: Promise<WasmModules> | undefined;

/**
 * PGlite's WebAssembly, compiled once per process and shared with every worker (a compiled module crosses
 * threads without being compiled again). PGlite caches its compiled module per thread, so without this each
 * new worker would compile 9 MB of WebAssembly: opening took twice as long as in-process in the tests, which
 * open a database per test.
 */
function compiledModules(): Promise<WasmModules> {
  compiled ??= (async () => {
    const dist = path.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
    const compile = async (file: string) => wasm.compile(await readFile(path.join(dist, file)));
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([
      compile("pglite.wasm"),
      compile("initdb.wasm"),
    ]);
    return { pgliteWasmModule, initdbWasmModule };
  })();
  compiled.catch(() => {
    compiled = undefined;
  });
  return compiled;
}

/**
 * Open PGlite in a worker thread and return a client for it.
 *
 * Why: PGlite runs PostgreSQL (compiled to WebAssembly) on the thread that calls it. In this process that is
 * the event loop, which also fetches from the node, decodes and serves HTTP: a backfill's storing could not
 * overlap its fetching (about 8 CPU-seconds for 10,000 transactions, all on one core), and every API read
 * blocked every other request for its duration. In a worker, PostgreSQL has a core of its own and the event
 * loop only waits for answers. Statements cross as structured clones (strings, numbers, Date, bigint,
 * Uint8Array survive); results come back the same way.
 *
 * Semantics follow PGlite's own: one connection, statements in the order they are sent, `transaction(fn)`
 * holding the connection until it commits or rolls back (other statements wait, they never run inside it).
 * Per-query `parsers` run here, on the values the worker returns as text for their types. Errors keep their
 * message, name and fields (`code`, `severity`, `detail`, …). When the worker dies, everything pending and
 * everything after fails with "PGlite is closed" (a connection error for `isConnectionError`).
 */
export async function createPgliteThread(options: {
  dataDir: string;
  /** PostgreSQL settings (`name=value`), passed as `-c` options after PGlite's default start parameters */
  settings: readonly string[];
  snapshot?: Blob | undefined;
  /**
   * PGlite opens `dataDir` once this resolves (a template being copied into it); the worker thread starts
   * and loads PGlite meanwhile. When it rejects, the worker is ended and this rejects with its error.
   */
  after?: Promise<unknown> | undefined;
}): Promise<PgliteClient> {
  const after = options.after;
  // Awaited below, after the compilation: a rejection meanwhile is not unhandled.
  after?.catch(() => undefined);
  const snapshot = options.snapshot ? await options.snapshot.arrayBuffer() : undefined;
  const modules = await compiledModules();
  const worker = new Worker(WORKER, {
    workerData: {
      dataDir: options.dataDir,
      settings: [...options.settings],
      snapshot,
      ...modules,
      waitForStart: after !== undefined,
    },
    ...(snapshot ? { transferList: [snapshot] } : {}),
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let closed = false;
  let failure: Error | undefined;

  const fail = (error: Error) => {
    closed = true;
    failure ??= error;
    for (const { reject } of pending.values()) reject(closedError(failure));
    pending.clear();
  };

  const opened = new Promise<void>((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`PGlite worker exited with code ${code}`));
    worker.once("message", (message: Ready) => {
      worker.off("error", reject);
      worker.off("exit", onExit);
      if (message.ready) resolve();
      else reject(toError(message.error));
    });
    worker.once("error", reject);
    worker.once("exit", onExit);
  });
  if (after) {
    try {
      await after;
    } catch (error) {
      opened.catch(() => undefined);
      await worker.terminate();
      throw error;
    }
    worker.postMessage({ start: true });
  }
  await opened;
  const channels = new Map<string, Set<(payload: string) => void>>();
  worker.on("message", (reply: Reply) => {
    if (reply.id === undefined) {
      for (const callback of channels.get(reply.channel) ?? []) callback(reply.payload);
      return;
    }
    const entry = pending.get(reply.id);
    if (!entry) return;
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    if (reply.error) entry.reject(toError(reply.error));
    else entry.resolve(reply.result);
  });
  worker.on("error", (error) => fail(error));
  worker.on("exit", (code) => fail(new Error(`PGlite worker exited with code ${code}`)));
  // Idle, the worker must not keep the process alive (PGlite in-process does not); busy, it must.
  worker.unref();

  const send = <T>(message: Record<string, unknown>): Promise<T> => {
    if (closed) return Promise.reject(closedError(failure));
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (pending.size === 1) worker.ref();
      worker.postMessage({ ...message, id });
    });
  };

  const query = async <T>(text: string, params: unknown[] = [], queryOptions: QueryOptions = {}) => {
    const parsers = queryOptions.parsers ?? {};
    const raw = Object.keys(parsers).map(Number);
    const copy = copyFromParameter(text, params);
    const result = await send<Results<T>>({
      op: "query",
      ...(copy ?? { text, params }),
      rowMode: queryOptions.rowMode ?? "object",
      raw,
    });
    if (raw.length > 0) applyParsers(result as Results, parsers, queryOptions.rowMode === "array");
    return result;
  };
  const exec = async (text: string, queryOptions: QueryOptions = {}) => {
    const parsers = queryOptions.parsers ?? {};
    const raw = Object.keys(parsers).map(Number);
    const results = await send<Results[]>({ op: "exec", text, raw });
    if (raw.length > 0) for (const result of results) applyParsers(result, parsers, false);
    return results;
  };

  // Exclusive sections (transactions, runExclusive) run one at a time, in call order: each waits for the end
  // of the one called before it (`gate` is the end of the last one called). Statements outside a section wait
  // while any section is open or queued, and check again when they wake: a section called meanwhile may have
  // sent its BEGIN first. With nothing open or queued, a statement is posted synchronously, in call order (a
  // transaction called first sends its BEGIN first).
  let sections = 0;
  let gate: Promise<void> = Promise.resolve();
  const waitForSections = async () => {
    while (sections > 0) await gate;
  };
  const exclusive = async <T>(fn: () => Promise<T>): Promise<T> => {
    const previous = gate;
    let release!: () => void;
    gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    sections++;
    try {
      await previous;
      return await fn();
    } finally {
      sections--;
      release();
    }
  };

  return {
    get closed() {
      return closed;
    },
    async query<T>(text: string, params?: unknown[], queryOptions?: QueryOptions) {
      if (sections > 0) await waitForSections();
      return query<T>(text, params, queryOptions);
    },
    async exec(text, queryOptions) {
      if (sections > 0) await waitForSections();
      return exec(text, queryOptions);
    },
    transaction<T>(callback: (tx: Transaction) => Promise<T>) {
      return exclusive(async () => {
        // BEGIN is not waited for: the callback's statements queue behind it in the worker and run once it
        // has, without a round trip through this event loop first. Should it fail, the worker refuses them
        // (pgliteWorker.js), so none runs outside the transaction.
        const begun = exec("BEGIN");
        begun.catch(() => undefined);
        let done = false;
        const tx: Transaction = {
          query: (text, params, queryOptions) => query(text, params, queryOptions),
          sql: (strings, ...params) =>
            query(
              strings.reduce((text, part, i) => `${text}$${i}${part}`),
              params,
            ),
          exec: (text, queryOptions) => exec(text, queryOptions),
          async rollback() {
            await exec("ROLLBACK");
            done = true;
          },
          listen() {
            return Promise.reject(new Error("listen is not supported inside a PGlite worker transaction"));
          },
          get closed() {
            return done;
          },
        };
        try {
          const result = await callback(tx);
          await begun;
          if (!done) await exec("COMMIT");
          done = true;
          return result;
        } catch (error) {
          if (!done && !closed) await exec("ROLLBACK").catch(() => undefined);
          done = true;
          throw error;
        }
      });
    },
    runExclusive: exclusive,
    async listen(channel, callback) {
      let callbacks = channels.get(channel);
      if (!callbacks) {
        callbacks = new Set();
        channels.set(channel, callbacks);
        if (sections > 0) await waitForSections();
        await send({ op: "listen", channel });
      }
      callbacks.add(callback);
      return async () => {
        const current = channels.get(channel);
        if (!current?.delete(callback) || current.size > 0) return;
        channels.delete(channel);
        if (closed) return;
        if (sections > 0) await waitForSections();
        await send({ op: "unlisten", channel });
      };
    },
    async dumpDataDir(compression = "none") {
      if (sections > 0) await waitForSections();
      return new Blob([await send<ArrayBuffer>({ op: "dump", compression })]);
    },
    async close() {
      if (closed) return;
      if (sections > 0) await waitForSections();
      await send({ op: "close" }).catch(() => undefined);
      closed = true;
      failure ??= new Error("PGlite is closed");
      await worker.terminate();
    },
  };
}

/** `COPY <table> (<columns>) FROM $1`: the statement `copyRows` sends, its data the one parameter. */
const COPY_FROM_PARAMETER = /^copy\s[^;]*\sfrom \$1$/i;

/**
 * PGlite reads a `COPY … FROM` from a file; the worker puts the bytes in a file of its own (`copyFrom` in
 * pgliteWorker.js). Drizzle passes a statement's text and parameters only, so `copyRows` writes
 * `copy … from $1` with the rows' bytes as the parameter: sent here as the text up to the file and the bytes.
 * Anything else: undefined.
 */
function copyFromParameter(
  text: string,
  params: unknown[],
): { text: string; params: []; copyData: Uint8Array } | undefined {
  const [data] = params;
  if (params.length !== 1 || !(data instanceof Uint8Array) || !COPY_FROM_PARAMETER.test(text))
    return undefined;
  return { text: text.slice(0, -3), params: [], copyData: data };
}

/** Run the caller's parsers over the columns of the types the worker returned as text. */
function applyParsers(result: Results, parsers: NonNullable<QueryOptions["parsers"]>, arrayRows: boolean) {
  const fields = result.fields ?? [];
  fields.forEach((field, column) => {
    const parse = parsers[field.dataTypeID];
    if (!parse) return;
    for (const row of result.rows as Record<string | number, unknown>[]) {
      const key = arrayRows ? column : field.name;
      const value = row[key];
      if (typeof value === "string") row[key] = parse(value);
    }
  });
}

function toError(serialized: SerializedError): Error {
  const error = new Error(serialized.message);
  Object.assign(error, serialized.props);
  error.name = serialized.name;
  return error;
}

function closedError(cause: Error | undefined): Error {
  return new Error("PGlite is closed", cause ? { cause } : {});
}
