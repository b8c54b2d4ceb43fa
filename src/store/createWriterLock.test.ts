import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../../test/helpers/db.ts";
import { testCommon, testConfig } from "../chain/_test/testCommon.ts";
import type { Common } from "../internal/common.ts";
import type { PostgresDatabase } from "./createDatabase.ts";
import { createWriterLock, type WriterLock } from "./createWriterLock.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
  return Date.now() - started;
}

/** A leader that records when it runs. */
function recordingLeader() {
  const log: string[] = [];
  let running = false;
  return {
    log,
    running: () => running,
    leader: {
      start() {
        running = true;
        log.push("start");
      },
      async stop() {
        await sleep(50);
        running = false;
        log.push("stop");
      },
    },
  };
}

describe.skipIf(testDatabaseUrl() === undefined)("createWriterLock (PostgreSQL)", () => {
  let testDb: TestDatabase;
  let database: PostgresDatabase;
  const locks: WriterLock[] = [];
  const options = { retryMs: 100, checkMs: 100, queryTimeoutMs: 2_000 };

  beforeAll(async () => {
    testDb = await createTestDatabase({ migrate: false });
    if (testDb.database.kind !== "postgres") throw new Error("expected PostgreSQL");
    database = testDb.database;
  });

  afterAll(async () => {
    for (const lock of locks) await lock.stop();
    await testDb?.cleanup();
  });

  const common = (): Common => testCommon(testConfig({ urls: ["http://127.0.0.1:1"] }));

  /** A separate key per test, so the tests do not see each other's locks. */
  const start = async (key: bigint, c: Common = common()) => {
    const recorder = recordingLeader();
    const lock = createWriterLock(c, { database, leader: recorder.leader, options: { ...options, key } });
    locks.push(lock);
    await lock.start();
    return { lock, ...recorder, common: c };
  };

  /** Sessions holding `key` (advisory locks split a bigint key into classid and objid). */
  const holders = async (key: bigint) => {
    const result = await database.pool.query<{ pid: number }>(
      `select pid from pg_locks where locktype = 'advisory' and granted
         and classid = ($1::bigint >> 32)::oid and objid = ($1::bigint & 4294967295)::oid`,
      [key.toString()],
    );
    return result.rows.map((r) => r.pid);
  };

  test("default: the first process leads, the second stands by, and metrics and status say so", async () => {
    const key = 0x10001n;
    const a = await start(key);
    const b = await start(key);
    expect(a.running()).toBe(true);
    expect(b.running()).toBe(false);
    expect(a.lock.status()).toMatchObject({ held: true, connected: true });
    expect(a.lock.status().since).toBeInstanceOf(Date);
    expect(b.lock.status()).toEqual({ held: false, since: null, connected: true });
    expect(await holders(key)).toHaveLength(1);
    expect(await a.common.metrics.registry.getSingleMetricAsString("protoscan_writer_lock_held")).toMatch(
      /protoscan_writer_lock_held 1/,
    );
    expect(await b.common.metrics.registry.getSingleMetricAsString("protoscan_writer_lock_held")).toMatch(
      /protoscan_writer_lock_held 0/,
    );
    // A standby that stops never led.
    await b.lock.stop();
    expect(b.log).toEqual([]);
    await a.lock.stop();
    expect(a.log).toEqual(["start", "stop"]);
    expect(await holders(key)).toEqual([]);
  });

  test("behavior: a released lock is taken by the standby within a retry period or so", async () => {
    const key = 0x10002n;
    const a = await start(key);
    const b = await start(key);
    const stoppedAt = Date.now();
    await a.lock.stop();
    await until(b.running, 2_000, "standby takes over");
    expect(Date.now() - stoppedAt).toBeLessThan(1_000);
    expect(b.lock.status().held).toBe(true);
    await b.lock.stop();
  });

  test("behavior: the holder's session is killed: it stops its leader at once, the standby takes over, and it stands by", async () => {
    const key = 0x10003n;
    const a = await start(key);
    const b = await start(key);
    const [pid] = await holders(key);
    await database.pool.query("select pg_terminate_backend($1)", [pid]);
    const stoppedIn = await until(() => !a.running(), 2_000, "old holder stops its writers");
    expect(stoppedIn).toBeLessThan(1_000);
    await until(b.running, 3_000, "standby takes over");
    expect(a.log).toEqual(["start", "stop"]);
    expect(a.lock.status().held).toBe(false);
    const lost = await a.common.metrics.registry.getSingleMetricAsString(
      "protoscan_writer_lock_transitions_total",
    );
    expect(lost).toMatch(/event="lost"} 1/);
    // The old holder campaigns again and stands by behind the new one.
    await until(() => a.lock.status().connected, 3_000, "old holder reconnects");
    await sleep(300);
    expect(a.running()).toBe(false);
    expect(await holders(key)).toHaveLength(1);
    await b.lock.stop();
    await until(a.running, 2_000, "old holder leads again");
    await a.lock.stop();
  });
});
