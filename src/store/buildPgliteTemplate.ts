import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { gzipSync } from "node:zlib";
import type { Logger } from "../internal/logger.ts";
import { createDatabase } from "./createDatabase.ts";
import { DATA_DIR_LOCK_FILE } from "./dataDirLock.ts";
import { migrate } from "./migrate.ts";
import { pgliteTemplateFingerprint, pgliteTemplatePaths, TEMPLATE_DATABASES } from "./pgliteTemplate.ts";

/**
 * Build the migrated PGlite template of the current migrations in `cache` (scripts/build.js runs it at
 * `npm install`), unless it is there, and remove the templates of other fingerprints. A fresh cluster is
 * created in memory and migrated (the slow path, once), its template databases dropped (TEMPLATE_DATABASES),
 * dumped as a gzipped tarball (`memory://` databases load it), and loaded into a data directory on disk (new
 * `DATA_DIR`s copy it). Built under a temporary name and renamed into place: a build killed half-way leaves no
 * template that looks whole, and two builds at once both end with one.
 *
 * @returns the template's folder and whether this call built it.
 */
export async function buildPgliteTemplate(
  cache: string,
  logger: Logger,
): Promise<{ dir: string; built: boolean }> {
  const fingerprint = pgliteTemplateFingerprint();
  const template = pgliteTemplatePaths(cache, fingerprint);
  await mkdir(cache, { recursive: true });
  for (const entry of await readdir(cache)) {
    if (entry.startsWith("pglite-") && entry !== path.basename(template.dir)) {
      await rm(path.join(cache, entry), { recursive: true, force: true });
    }
  }
  if ((await readdir(cache)).includes(path.basename(template.dir)))
    return { dir: template.dir, built: false };

  const building = path.join(cache, `building-${fingerprint}-${process.pid}`);
  await rm(building, { recursive: true, force: true });
  await mkdir(building);
  try {
    const memory = await createDatabase({ dataDir: "memory://", logger, pgliteTemplate: false });
    let tarball: Blob;
    try {
      if (memory.kind !== "pglite") throw new Error("expected PGlite");
      await migrate(memory);
      for (const name of TEMPLATE_DATABASES) {
        await memory.client.query(`alter database ${name} is_template false`);
        await memory.client.query(`drop database ${name}`);
      }
      tarball = await memory.client.dumpDataDir("none");
    } finally {
      await memory.close();
    }
    const dataDir = path.join(building, "data");
    const disk = await createDatabase({ dataDir, logger, pgliteSnapshot: tarball, pgliteTemplate: false });
    await disk.close();
    await rm(path.join(dataDir, DATA_DIR_LOCK_FILE), { force: true });
    await writeFile(
      path.join(building, "data.tar.gz"),
      gzipSync(new Uint8Array(await tarball.arrayBuffer())),
    );
    await rename(building, template.dir).catch(async (error: unknown) => {
      // Another build renamed the same template into place first: theirs is as good.
      if (!(await readdir(cache)).includes(path.basename(template.dir))) throw error;
    });
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return { dir: template.dir, built: true };
}
