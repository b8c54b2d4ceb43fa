import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
// @ts-expect-error plain JavaScript module without declarations (it runs in PGlite's worker thread)
import { answerMissingFilesCheaply } from "./pgliteMissingFiles.js";

/** Where PGlite mounts its data directory in its own file system. */
const PGDATA = "/pglite/data";

let dir: string;
let pg: PGlite;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "protoscan-missing-files-"));
  pg = await PGlite.create(join(dir, "data"));
}, 120_000);
afterAll(async () => {
  await pg?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The errno PGlite's file system answers for `path` (0: found). */
function lookupErrno(path: string): number {
  try {
    pg.Module.FS.stat(path);
    return 0;
  } catch (error) {
    return (error as { errno?: number }).errno ?? -1;
  }
}

describe("answerMissingFilesCheaply", () => {
  test("default: a missing file is ENOENT (44), and a file created after a failed lookup is found", async () => {
    expect(answerMissingFilesCheaply(pg.Module)).toBe(true);
    expect(lookupErrno(`${PGDATA}/no-such-file`)).toBe(44);
    expect(lookupErrno(`${PGDATA}/no-such-dir/file`)).toBe(44);
    await writeFile(join(dir, "data", "no-such-file"), "now it exists");
    expect(lookupErrno(`${PGDATA}/no-such-file`)).toBe(0);
    expect(lookupErrno(`${PGDATA}/PG_VERSION`)).toBe(0);
  });

  test("behavior: PostgreSQL works on the patched file system (relations, index page splits, a new fork)", async () => {
    await pg.exec(`create table t (id int primary key, note text);
      insert into t select g, repeat('x', 200) from generate_series(1, 20000) g;`);
    // VACUUM creates the heap's free space map: a fork that was missing until now.
    await pg.exec("vacuum t");
    const rows = await pg.query<{ n: number; fsm: boolean }>(
      "select count(*)::int as n, pg_relation_size('t', 'fsm') > 0 as fsm from t",
    );
    expect(rows.rows).toEqual([{ n: 20000, fsm: true }]);
  });

  test("error: a file system without the expected shape is left alone", () => {
    expect(answerMissingFilesCheaply({})).toBe(false);
    expect(answerMissingFilesCheaply({ FS: { ErrnoError: class {} }, NODEFS: {} })).toBe(false);
    expect(answerMissingFilesCheaply(undefined)).toBe(false);
  });
});
