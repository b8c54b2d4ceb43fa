import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createLogger } from "../internal/logger.ts";
import { buildPgliteTemplate } from "./buildPgliteTemplate.ts";
import { createDatabase, type Database } from "./createDatabase.ts";
import { migrate, pendingMigrations } from "./migrate.ts";
import { pgliteTemplateFingerprint, pgliteTemplatePaths } from "./pgliteTemplate.ts";

type Line = { level: number; msg: string; ms?: number; template?: string };

/** A logger whose lines the test reads. */
function capturingLogger() {
  const lines: Line[] = [];
  const logger = createLogger({
    level: "info",
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Line) },
  });
  return { logger, lines };
}

/** Everything the migrations made: tables and columns, indexes, and the migrations recorded as applied. */
async function schemaOf(database: Database) {
  const columns = await database.db.execute(sql`
    select table_schema, table_name, column_name, data_type, is_nullable, column_default
    from information_schema.columns where table_schema not in ('pg_catalog', 'information_schema')
    order by 1, 2, 3`);
  const indexes = await database.db.execute(sql`
    select schemaname, tablename, indexname, indexdef from pg_indexes
    where schemaname not in ('pg_catalog', 'information_schema') order by 1, 2, 3`);
  const migrations = await database.db.execute(
    sql`select hash, created_at from drizzle.__drizzle_migrations order by id`,
  );
  return { columns: columns.rows, indexes: indexes.rows, migrations: migrations.rows };
}

// PGlite only, whatever DATABASE_URL says: the templates are PGlite's.
describe("PGlite template", () => {
  let tmp: string;
  let cache: string;
  let slowSchema: Awaited<ReturnType<typeof schemaOf>>;

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), "protoscan-template-"));
    cache = path.join(tmp, "cache");
    const { logger } = capturingLogger();
    expect(await buildPgliteTemplate(cache, logger)).toEqual({
      dir: pgliteTemplatePaths(cache, pgliteTemplateFingerprint()).dir,
      built: true,
    });
    // The slow path, for comparison: initdb and every migration.
    const slow = await createDatabase({ dataDir: path.join(tmp, "slow"), logger, pgliteTemplate: false });
    try {
      expect((await migrate(slow)).applied).toBeGreaterThan(10);
      slowSchema = await schemaOf(slow);
    } finally {
      await slow.close();
    }
  }, 120_000);

  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test("behavior: built once per fingerprint; other fingerprints' templates are removed", async () => {
    const stale = path.join(cache, "pglite-0000000000000000");
    await mkdir(stale);
    const { logger } = capturingLogger();
    const again = await buildPgliteTemplate(cache, logger);
    expect(again.built).toBe(false);
    expect(await readdir(cache)).toEqual([path.basename(again.dir)]);
    expect((await readdir(again.dir)).sort()).toEqual(["data", "data.tar.gz"]);
  });

  test("default: a new DATA_DIR opens from the template, with the schema of a migrated database", async () => {
    const { logger, lines } = capturingLogger();
    const dir = path.join(tmp, "fast");
    const database = await createDatabase({ dataDir: dir, logger, pgliteTemplate: cache });
    try {
      const line = lines.find((l) => l.msg === "database created from the template");
      expect(line?.template).toBe(pgliteTemplatePaths(cache, pgliteTemplateFingerprint()).dir);
      expect(await pendingMigrations(database)).toBe(0);
      expect(await migrate(database)).toEqual({ applied: 0 });
      expect(await schemaOf(database)).toEqual(slowSchema);
      // PGlite's one database, without the template databases initdb made (buildPgliteTemplate.ts).
      const databases = await database.db.execute<{ datname: string }>(sql`select datname from pg_database`);
      expect(databases.rows).toEqual([{ datname: "postgres" }]);
      expect(await readdir(path.join(dir, "base"))).toHaveLength(1);
      // Settings come from the start, not from the template: those of a data directory on disk.
      const pool = await database.db.execute<{ shared_buffers: string }>(sql`show shared_buffers`);
      expect(pool.rows).toEqual([{ shared_buffers: "8MB" }]);
      // The creation finished: no marker left, and the directory reopens as an existing database.
      expect(await readdir(dir)).not.toContain(".protoscan-creating");
    } finally {
      await database.close();
    }
    const reopened = capturingLogger();
    const again = await createDatabase({ dataDir: dir, logger: reopened.logger, pgliteTemplate: cache });
    try {
      expect(reopened.lines.map((l) => l.msg)).toEqual(["database opened"]);
      expect(await pendingMigrations(again)).toBe(0);
    } finally {
      await again.close();
    }
  });

  test("default: memory:// loads the template", async () => {
    const { logger, lines } = capturingLogger();
    const database = await createDatabase({ dataDir: "memory://", logger, pgliteTemplate: cache });
    try {
      expect(lines.some((l) => l.msg === "database created from the template")).toBe(true);
      expect(await migrate(database)).toEqual({ applied: 0 });
      expect(await schemaOf(database)).toEqual(slowSchema);
    } finally {
      await database.close();
    }
  });

  test("behavior: a stale template (another fingerprint) is not used: the slow path, saying why", async () => {
    const staleCache = path.join(tmp, "stale");
    const current = pgliteTemplatePaths(cache, pgliteTemplateFingerprint()).dir;
    await cp(current, path.join(staleCache, "pglite-0123456789abcdef"), { recursive: true });
    const { logger, lines } = capturingLogger();
    const database = await createDatabase({
      dataDir: path.join(tmp, "s"),
      logger,
      pgliteTemplate: staleCache,
    });
    try {
      expect(lines.map((l) => l.msg)).toEqual([
        expect.stringMatching(
          /^the PGlite template was built for other migrations or another PGlite version/,
        ),
        "database opened",
      ]);
      expect(await pendingMigrations(database)).toBe(slowSchema.migrations.length);
    } finally {
      await database.close();
    }
  }, 60_000);

  test("behavior: no template: the slow path, saying why", async () => {
    const { logger, lines } = capturingLogger();
    const empty = path.join(tmp, "none");
    const database = await createDatabase({ dataDir: "memory://", logger, pgliteTemplate: empty });
    try {
      expect(lines.map((l) => l.msg)).toEqual([
        expect.stringMatching(/^no PGlite template \(npm run build makes one\)/),
        "database opened",
      ]);
      expect(await pendingMigrations(database)).toBe(slowSchema.migrations.length);
    } finally {
      await database.close();
    }
  }, 60_000);

  test("behavior: a copy of the template interrupted half-way is redone at the next start", async () => {
    const dir = path.join(tmp, "interrupted");
    // What a kill during the copy leaves: the creation marker and some of the template's files.
    const template = pgliteTemplatePaths(cache, pgliteTemplateFingerprint());
    await mkdir(dir);
    await writeFile(path.join(dir, ".protoscan-creating"), "");
    await cp(path.join(template.dataDir, "PG_VERSION"), path.join(dir, "PG_VERSION"));
    await cp(path.join(template.dataDir, "global"), path.join(dir, "global"), { recursive: true });
    const { logger, lines } = capturingLogger();
    const database = await createDatabase({ dataDir: dir, logger, pgliteTemplate: cache });
    try {
      expect(lines.map((l) => l.msg)).toEqual([
        "the database was not fully created by the last start: creating it again",
        "database created from the template",
        "database opened",
      ]);
      expect(await schemaOf(database)).toEqual(slowSchema);
    } finally {
      await database.close();
    }
    expect(await readdir(dir)).not.toContain(".protoscan-creating");
  });
});
