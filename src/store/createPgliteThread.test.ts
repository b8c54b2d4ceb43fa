import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { types } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createPgliteThread, type PgliteClient } from "./createPgliteThread.ts";
import { isConnectionError } from "./errors.ts";

// One PGlite (in its worker) for the file: opening one costs seconds.
let client: PgliteClient;
beforeAll(async () => {
  client = await createPgliteThread({ dataDir: "memory://", settings: ["work_mem=2MB"] });
  await client.exec("create table items (id int primary key, amount numeric(78,0), at timestamptz)");
}, 120_000);
afterAll(async () => {
  await client?.close();
});

describe("createPgliteThread", () => {
  test("default: values cross the thread with the types PGlite gives them", async () => {
    const result = await client.query<Record<string, unknown>>(
      "select $1::int as n, 9007199254740993::int8 as big, $2::jsonb as j, '\\x0102'::bytea as b, $3::timestamptz as t, current_setting('work_mem') as wm",
      [7, { a: [1, 2] }, new Date("2026-11-21T08:00:00.123Z")],
    );
    expect(result.rows).toEqual([
      {
        n: 7,
        big: "9007199254740993", // int8 as text, like node-postgres
        j: { a: [1, 2] },
        b: new Uint8Array([1, 2]),
        t: new Date("2026-11-21T08:00:00.123Z"),
        wm: "2MB", // settings reach PostgreSQL
      },
    ]);
    expect(result.fields.map((f) => f.name)).toEqual(["n", "big", "j", "b", "t", "wm"]);
  });

  test("behavior: per-query parsers run on the text of their types, in object and array rows", async () => {
    const parsers = { [types.TIMESTAMPTZ]: (value: string) => `parsed ${value}`, [types.INT4]: Number };
    const sqlText = "select '2026-11-21 08:00:00+00'::timestamptz as t, 5 as n";
    const objects = await client.query<{ t: string; n: number }>(sqlText, [], { parsers });
    expect(objects.rows).toEqual([{ t: "parsed 2026-11-21 08:00:00+00", n: 5 }]);
    const arrays = await client.query<unknown[]>(sqlText, [], { rowMode: "array", parsers });
    expect(arrays.rows).toEqual([["parsed 2026-11-21 08:00:00+00", 5]]);
  });

  test("behavior: per-query parsers apply to their own statement only, prepared or unnamed", async () => {
    const parsers = { [types.TIMESTAMPTZ]: (value: string) => `raw ${value}` };
    const text = "select $1::timestamptz as t, $2::int8 as big";
    const at = new Date("2026-11-28T10:00:00.000Z");
    const run = (query: PgliteClient["query"], withParsers: boolean) =>
      query(text, [at, "9007199254740993"], withParsers ? { parsers, rowMode: "array" } : {});
    for (let i = 0; i < 2; i++) {
      // Prepared on the first call: parsers given once do not stay with the statement or the connection.
      expect((await run(client.query, true)).rows).toEqual([
        ["raw 2026-11-28 10:00:00+00", "9007199254740993"],
      ]);
      expect((await run(client.query, false)).rows).toEqual([{ t: at, big: "9007199254740993" }]);
    }
    await client.transaction(async (tx) => {
      const unnamed = "select $1::timestamptz as t, $2::int8 + 1 as big";
      expect((await tx.query(unnamed, [at, "1"], { parsers, rowMode: "array" })).rows).toEqual([
        ["raw 2026-11-28 10:00:00+00", "2"],
      ]);
      expect((await tx.query(unnamed, [at, "1"])).rows).toEqual([{ t: at, big: "2" }]);
    });
  });

  test("error: an unnamed statement's errors keep their fields and roll its transaction back", async () => {
    const error = await client
      .transaction(async (tx) => {
        await tx.query("insert into items (id, amount) values ($1, 1)", [900]);
        await tx.query("select 1 / $1::int as q", [0]);
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ message: "division by zero", code: "22012" });
    expect((await client.query("select count(*)::int as n from items where id = 900")).rows).toEqual([
      { n: 0 },
    ]);
  });

  test("behavior: a transaction commits, and statements from outside wait for its end", async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const transaction = client.transaction(async (tx) => {
      await tx.query("insert into items (id, amount) values (1, $1)", [
        "115792089237316195423570985008687907853269984665640564039457584007913129639935",
      ]);
      order.push("inserted");
      await held;
      order.push("committing");
    });
    // Sent while the transaction is open: must not run inside it, nor before it commits.
    const outside = client.query<{ count: string }>("select count(*) from items").then((r) => {
      order.push("outside");
      return r.rows[0]?.count;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    await transaction;
    expect(await outside).toBe("1");
    expect(order).toEqual(["inserted", "committing", "outside"]);
    const stored = await client.query<{ amount: string }>("select amount from items where id = 1");
    expect(stored.rows[0]?.amount).toBe(
      "115792089237316195423570985008687907853269984665640564039457584007913129639935",
    );
  });

  test("behavior: transactions queued behind one another each run alone, and outside statements never inside one", async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const txid = async (run: (text: string) => Promise<{ rows: { id: string }[] }>) =>
      (await run("select txid_current()::text as id")).rows[0]!.id;
    // Each transaction reads its id twice with a pause between: sharing the connection's transaction with
    // another (a second BEGIN is only a warning) would show as a changed id or as two with the same one.
    const transaction = () =>
      client.transaction(async (tx) => {
        const first = await txid((text) => tx.query(text));
        await sleep(20);
        return { first, second: await txid((text) => tx.query(text)) };
      });
    const outside = () => txid((text) => client.query(text));
    const results = await Promise.all([
      transaction(),
      transaction(),
      outside(),
      transaction(),
      transaction(),
    ]);
    const ids: string[] = [];
    for (const result of results) {
      if (typeof result === "string") ids.push(result);
      else {
        expect(result.second).toBe(result.first);
        ids.push(result.first);
      }
    }
    expect(new Set(ids).size).toBe(5);
  });

  test("behavior: a failed transaction rolls back", async () => {
    await expect(
      client.transaction(async (tx) => {
        await tx.query("insert into items (id) values (2)");
        await tx.query("insert into items (id) values (2)"); // duplicate key
      }),
    ).rejects.toMatchObject({ code: "23505" });
    const rows = await client.query("select id from items where id = 2");
    expect(rows.rows).toEqual([]);
  });

  test("behavior: statements sent behind a BEGIN that fails are refused, never run outside the transaction", async () => {
    // A transaction left aborted by a statement outside the client's transaction(): its BEGIN then fails.
    await client.exec("BEGIN");
    await expect(client.query("select 1 / 0")).rejects.toMatchObject({ code: "22012" });
    let firstStatement: unknown;
    const error = await client
      .transaction(async (tx) => {
        // Sent without waiting for the BEGIN: refused, not run in autocommit.
        firstStatement = await tx.query("insert into items (id) values (3)").catch((e: unknown) => e);
        throw firstStatement;
      })
      .catch((e: unknown) => e);
    expect(error).toBe(firstStatement);
    expect(error).toMatchObject({
      message: expect.stringMatching(/^not run: the transaction's BEGIN failed/),
    });
    // The transaction's ROLLBACK ran: the connection is usable, and the insert never happened.
    expect((await client.query("select id from items where id = 3")).rows).toEqual([]);
    await client.transaction(async (tx) => {
      await tx.query("insert into items (id) values (3)");
    });
    expect((await client.query("select id from items where id = 3")).rows).toEqual([{ id: 3 }]);
    await client.query("delete from items where id = 3");
  });

  test("behavior: COPY … FROM $1 reads the bytes given; COPYs sent together each read their own", async () => {
    const lines = (ids: number[]) =>
      new TextEncoder().encode(ids.map((id) => `${id}\t${id * 10}\n`).join(""));
    const batches = [
      [10, 11, 12],
      [20, 21],
      [30, 31, 32, 33],
    ];
    await client.transaction(async (tx) => {
      const copied = await Promise.all(
        batches.map((ids) => tx.query("copy items (id, amount) from $1", [lines(ids)])),
      );
      expect(copied.map((r) => r.affectedRows)).toEqual([3, 2, 4]);
    });
    const rows = await client.query<{ id: number; amount: string }>(
      "select id, amount::text from items where id >= 10 order by id",
    );
    expect(rows.rows).toEqual(batches.flat().map((id) => ({ id, amount: String(id * 10) })));
    // A COPY that fails (a duplicate key) leaves the next one its own bytes too.
    await expect(client.query("copy items (id, amount) from $1", [lines([10])])).rejects.toMatchObject({
      code: "23505",
    });
    await client.query("copy items (id, amount) from $1", [lines([40])]);
    expect((await client.query("select id from items where id = 40")).rows).toEqual([{ id: 40 }]);
    await client.query("delete from items where id >= 10");
  });

  test("error: PostgreSQL errors keep their fields", async () => {
    const error = await client.query("select nope from items").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      message: 'column "nope" does not exist',
      code: "42703",
      severity: "ERROR",
    });
    expect(isConnectionError(error)).toBe(false);
  });

  const preparedText = (text: string) =>
    client.query<{ name: string }>("select name from pg_prepared_statements where statement = $1", [text]);

  test("behavior: a statement is prepared once under a name and bound again for each call", async () => {
    const text = "select $1::int * 2 as doubled, $2::text as label";
    for (const n of [1, 2, 3]) {
      expect((await client.query(text, [n, n === 2 ? null : `n${n}`])).rows).toEqual([
        { doubled: n * 2, label: n === 2 ? null : `n${n}` },
      ]);
    }
    const names = (await preparedText(text)).rows;
    expect(names).toHaveLength(1);
    expect(names[0]!.name).toMatch(/^protoscan_\d+$/);
  });

  test("behavior: a statement first met inside a transaction runs unnamed, and is prepared outside one", async () => {
    const text = "select $1::int + 100 as n";
    await client.transaction(async (tx) => {
      expect((await tx.query(text, [1])).rows).toEqual([{ n: 101 }]);
      expect((await tx.query(text, [2])).rows).toEqual([{ n: 102 }]);
    });
    expect((await preparedText(text)).rows).toHaveLength(0);
    expect((await client.query(text, [3])).rows).toEqual([{ n: 103 }]);
    expect((await preparedText(text)).rows).toHaveLength(1);
  });

  test("error: a prepared statement's errors keep their fields, and the next call runs", async () => {
    const text = "select 1 / $1::int as q";
    for (let i = 0; i < 2; i++) {
      const error = await client.query(text, [0]).catch((e: unknown) => e);
      expect(error).toMatchObject({ message: "division by zero", code: "22012" });
    }
    expect((await client.query(text, [1])).rows).toEqual([{ q: 1 }]);
    expect((await preparedText(text)).rows).toHaveLength(1);
  });

  test("behavior: a prepared statement whose table changed shape answers with the new columns", async () => {
    await client.exec("create table shape (a int); insert into shape values (1)");
    const text = "select * from shape where a = $1";
    expect((await client.query(text, [1])).rows).toEqual([{ a: 1 }]);
    await client.exec("alter table shape add column b int default 7");
    expect((await client.query(text, [1])).rows).toEqual([{ a: 1, b: 7 }]);
    expect((await client.query(text, [1])).rows).toEqual([{ a: 1, b: 7 }]);
    await client.exec("drop table shape");
  });

  test("behavior: at most 256 statements stay prepared, the least recently used closed first", async () => {
    const text = (i: number) => `select ${i}::int + $1::int as n`;
    for (let i = 0; i < 300; i++) expect((await client.query(text(i), [1])).rows).toEqual([{ n: i + 1 }]);
    const count = await client.query<{ n: number }>(
      "select count(*)::int as n from pg_prepared_statements where name like 'protoscan\\_%'",
    );
    expect(count.rows[0]!.n).toBeLessThanOrEqual(256);
    expect((await preparedText(text(0))).rows).toHaveLength(0);
    expect((await preparedText(text(299))).rows).toHaveLength(1);
    expect((await client.query(text(0), [2])).rows).toEqual([{ n: 2 }]);
  });

  test("behavior: LISTEN hears NOTIFY until unlistened", async () => {
    const heard: string[] = [];
    const unlisten = await client.listen("items_changed", (payload) => heard.push(payload));
    await client.query("select pg_notify('items_changed', 'one')");
    await unlisten();
    await client.query("select pg_notify('items_changed', 'two')");
    expect(heard).toEqual(["one"]);
  });

  test("behavior: dumpDataDir makes a snapshot another thread opens", async () => {
    const snapshot = await client.dumpDataDir("none");
    const copy = await createPgliteThread({ dataDir: "memory://", settings: [], snapshot });
    try {
      const rows = await copy.query<{ id: number }>("select id from items order by id");
      expect(rows.rows).toEqual([{ id: 1 }]);
    } finally {
      await copy.close();
    }
    const closed = await copy.query("select 1").catch((e: unknown) => e);
    expect(copy.closed).toBe(true);
    expect(closed).toMatchObject({ message: "PGlite is closed" });
    expect(isConnectionError(closed)).toBe(true);
  }, 120_000);

  test("behavior: with `after`, PGlite opens its directory only once it has resolved", async () => {
    // The directory is written while the worker starts: a snapshot unpacked into it by `after`.
    const dir = await mkdtemp(join(tmpdir(), "protoscan-after-"));
    try {
      const seed = await createPgliteThread({ dataDir: join(dir, "seed"), settings: [] });
      await seed.exec("create table marks (n int); insert into marks values (42)");
      await seed.close();
      let written = false;
      const after = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        await cp(join(dir, "seed"), join(dir, "data"), { recursive: true });
        written = true;
      })();
      const opened = await createPgliteThread({ dataDir: join(dir, "data"), settings: [], after });
      try {
        expect(written).toBe(true);
        const rows = await opened.query<{ n: number }>("select n from marks");
        expect(rows.rows).toEqual([{ n: 42 }]);
      } finally {
        await opened.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  test("error: when `after` rejects, the open rejects with its error and the worker is ended", async () => {
    const failure = new Error("the template could not be copied");
    const opening = createPgliteThread({
      dataDir: "memory://",
      settings: [],
      after: Promise.reject(failure),
    });
    await expect(opening).rejects.toBe(failure);
  });
});
