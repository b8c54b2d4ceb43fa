import { randomBytes } from "node:crypto";
import pg from "pg";

/** A database created for one benchmark run. */
export type FreshDatabase = {
  /** the DATABASE_URL of the new database */
  url: string;
  /** DROP it (WITH FORCE: protoscan's connections may still be open) */
  drop(): Promise<void>;
};

/**
 * Create `protoscan_bench_<prefix>_<random>` on the server of `serverUrl` (a DATABASE_URL), so a benchmark
 * starts from an empty store and never touches the database the URL names. The caller drops it at cleanup.
 */
export async function freshPostgresDatabase(serverUrl: string, prefix: string): Promise<FreshDatabase> {
  const name = `protoscan_bench_${prefix}_${randomBytes(4).toString("hex")}`;
  const admin = async (text: string) => {
    // CREATE/DROP DATABASE cannot run inside a pool's transaction: one connection of its own per statement.
    const client = new pg.Client({ connectionString: serverUrl, application_name: "protoscan-bench" });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}
