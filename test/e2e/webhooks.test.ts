import { gzipSync } from "node:zlib";
import { eq } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  getAddress,
  type Hash,
  type Hex,
  http,
  parseEther,
  parseUnits,
} from "viem";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { buildApp } from "../../src/api/buildApp.ts";
import { startProtoscan } from "../../src/cli/startProtoscan.ts";
import type { Config } from "../../src/config/schema.ts";
import { createLogger } from "../../src/internal/logger.ts";
import { getDeliveries } from "../../src/store/inbox.ts";
import { webhookInbox } from "../../src/store/schema.ts";
import {
  alchemyAddressActivity,
  alchemyGraphql,
  alchemyHeaders,
  quicknodeDelivery,
  quicknodeHeaders,
} from "../../src/webhooks/_test/fixtures.ts";
import { createInboxWorker, type InboxWorker } from "../../src/webhooks/createInboxWorker.ts";
import { createInboxSignal } from "../../src/webhooks/inboxSignal.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/db.ts";
import { type DemoChain, setupDemoChain } from "../helpers/demo.ts";
import { createTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

const ALCHEMY_KEYS = ["whsec_retiring_key", "whsec_current_key"];
const QN_TOKEN = "qn_stream_security_token";

type Running = { pipeline: TestPipeline; worker: InboxWorker; app: FastifyInstance; url: string };

describe("POST /api/webhooks/:provider (SPEC §3.2), real sockets", () => {
  let chain: DemoChain;
  let config: Config;
  let db: TestDatabase;
  let running: Running;
  const logLines: string[] = [];

  /** protoscan's API and inbox worker as `startProtoscan` wires them (role all), listening on a free port. */
  async function start(options: { worker: boolean }): Promise<Running> {
    const logger = createLogger({ level: "info", destination: { write: (line) => logLines.push(line) } });
    const pipeline = await createTestPipeline({ config, database: db.database, logger });
    const signal = createInboxSignal();
    const worker = createInboxWorker(pipeline.common, {
      db: db.database.db,
      ingest: pipeline.ingest,
      signal,
    });
    if (options.worker) worker.start();
    const app = await buildApp(pipeline.common, {
      database: db.database,
      chain: pipeline.chain,
      inboxSignal: signal,
    });
    const url = await app.listen({ host: "127.0.0.1", port: 0 });
    return { pipeline, worker, app, url };
  }

  async function stop(r: Running | undefined): Promise<void> {
    await r?.app.close();
    await r?.worker.stop();
    await r?.pipeline.close();
  }

  beforeAll(async () => {
    chain = await setupDemoChain();
    config = {
      ...chain.config,
      webhooks: { alchemy: { signingKeys: ALCHEMY_KEYS }, quicknode: { securityTokens: [QN_TOKEN] } },
    };
    db = await createTestDatabase();
    running = await start({ worker: true });
  });

  afterAll(async () => {
    await stop(running);
    await db?.cleanup();
    await chain?.anvil.stop();
  });

  beforeEach(() => {
    running.pipeline.events.length = 0;
  });

  const post = (
    provider: string,
    body: string | Buffer,
    headers: Record<string, string>,
    url = running.url,
  ) => fetch(`${url}/api/webhooks/${provider}`, { method: "POST", headers, body });

  const inboxSize = async () => (await getDeliveries(db.database.db)).length;

  /** Disperse (a shared contract: polling never sees it) ether or a token to two recipients. */
  async function disperse(kind: "ether" | "WETH", userIndex = 0): Promise<Hash> {
    const wallet = createWalletClient({ transport: http(chain.anvil.url) });
    const d = chain.deployment;
    const recipients = [d.users[(userIndex + 1) % 5]!, d.users[(userIndex + 2) % 5]!];
    if (kind === "ether") {
      return wallet.sendTransaction({
        account: d.users[userIndex]!,
        chain: null,
        to: d.contracts.disperse,
        value: parseEther("0.3"),
        data: encodeFunctionData({
          abi: d.abis.disperse,
          functionName: "disperseEther",
          args: [recipients, [parseEther("0.1"), parseEther("0.2")]],
        }),
      });
    }
    return wallet.sendTransaction({
      account: d.users[userIndex]!,
      chain: null,
      to: d.contracts.disperse,
      data: encodeFunctionData({
        abi: d.abis.disperse,
        functionName: "disperseToken",
        args: [d.tokens.WETH.address, recipients, [parseUnits("0.01", 18), parseUnits("0.02", 18)]],
      }),
    });
  }

  /** The delivery Alchemy sends for a Disperse ether call watched on its sender: external + internal ETH. */
  function addressActivityFor(hash: Hash, blockNumber: number, id?: string): string {
    const d = chain.deployment;
    const payload = alchemyAddressActivity(
      [
        {
          hash,
          blockNum: blockNumber,
          fromAddress: d.users[0]!.toLowerCase() as Hex,
          toAddress: d.contracts.disperse.toLowerCase() as Hex,
          category: "external",
          value: 0.3,
          rawValue: parseEther("0.3"),
        },
        {
          hash,
          blockNum: blockNumber,
          fromAddress: d.contracts.disperse.toLowerCase() as Hex,
          toAddress: d.users[1]!.toLowerCase() as Hex,
          category: "internal",
          value: 0.1,
          rawValue: parseEther("0.1"),
        },
      ],
      id === undefined ? {} : { id },
    );
    return JSON.stringify(payload);
  }

  async function receiptOf(hash: Hash) {
    const client = createPublicClient({ transport: http(chain.anvil.url) });
    await client.waitForTransactionReceipt({ hash });
    const receipt = await client.request({ method: "eth_getTransactionReceipt", params: [hash] });
    if (!receipt) throw new Error(`no receipt for ${hash}`);
    return receipt;
  }

  async function apiTx(hash: Hash, timeoutMs = 15_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const response = await fetch(`${running.url}/api/tx/${hash}`);
      if (response.status === 200) return (await response.json()) as Record<string, unknown>;
      if (Date.now() > deadline) throw new Error(`transaction ${hash} not stored in time`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  const broadcastHashes = () =>
    running.pipeline.events.flatMap((e) => (e.type === "transaction" ? [e.transaction.hash] : []));

  test("default: Alchemy ADDRESS_ACTIVITY of a Disperse call is acknowledged, stored and broadcast", async () => {
    const hash = await disperse("ether");
    const receipt = await receiptOf(hash);
    const body = addressActivityFor(hash, Number(receipt.blockNumber));
    const sentAt = Date.now();
    // signed with the second configured key: keys are rotated by listing both
    const response = await post("alchemy", body, alchemyHeaders(body, ALCHEMY_KEYS[1]!));
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    expect(response.status).toBe(200);
    const ack = (await response.json()) as { deliveryId: string };
    expect(ack).toEqual({ status: "accepted", deliveryId: JSON.parse(body).id });

    const tx = await apiTx(hash);
    expect(tx).toMatchObject({
      txHash: hash,
      blockNumber: Number(receipt.blockNumber),
      fromAddress: getAddress(chain.deployment.users[0]!),
      toAddress: getAddress(chain.deployment.contracts.disperse),
      valueWei: parseEther("0.3").toString(),
      status: true,
      protocol: "demovault",
      actionType: "disperse",
      functionName: "disperseEther",
      source: "webhook",
    });
    expect(broadcastHashes()).toEqual([hash]);
    const delivery = (await getDeliveries(db.database.db)).find((d) => d.deliveryId === ack.deliveryId);
    expect(delivery).toMatchObject({ provider: "alchemy", rawBody: body, status: "done", lastError: null });
  });

  test("default: Alchemy GRAPHQL block.logs[].transaction.hash (a WETH disperse)", async () => {
    const hash = await disperse("WETH", 1);
    const receipt = await receiptOf(hash);
    const body = JSON.stringify(
      alchemyGraphql(
        {
          hash: receipt.blockHash,
          number: Number(receipt.blockNumber),
          timestamp: Math.floor(Date.now() / 1000),
        },
        receipt.logs.map((log) => ({
          txHash: log.transactionHash!,
          account: log.address,
          topics: log.topics,
          data: log.data,
          index: Number(log.logIndex),
          from: receipt.from,
          to: receipt.to,
          status: 1,
        })),
      ),
    );
    const response = await post("alchemy", body, alchemyHeaders(body, ALCHEMY_KEYS[0]!));
    expect(response.status).toBe(200);
    const tx = await apiTx(hash);
    expect(tx).toMatchObject({
      txHash: hash,
      protocol: "demovault",
      functionName: "disperseToken",
      source: "webhook",
    });
    expect((tx.tokenTransfers as unknown[]).length).toBe(receipt.logs.length);
    expect(broadcastHashes()).toEqual([hash]);
  });

  test("default: QuickNode Streams receipts dataset, plain and gzip-compressed", async () => {
    const plain = await disperse("ether", 2);
    const receipt = await receiptOf(plain);
    const body = JSON.stringify(quicknodeDelivery("receipts", [[receipt]], Number(receipt.blockNumber)));
    const response = await post("quicknode", body, quicknodeHeaders(body, QN_TOKEN, { nonce: "qn-nonce-1" }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "accepted", deliveryId: "qn-nonce-1" });
    expect(await apiTx(plain)).toMatchObject({
      txHash: plain,
      functionName: "disperseEther",
      source: "webhook",
    });

    // Streams signs the uncompressed JSON and gzips it for transport.
    const zipped = await disperse("WETH", 3);
    const zippedReceipt = await receiptOf(zipped);
    const block = await createPublicClient({ transport: http(chain.anvil.url) }).request({
      method: "eth_getBlockByNumber",
      params: [zippedReceipt.blockNumber, true],
    });
    if (!block) throw new Error("no block");
    const json = JSON.stringify(
      quicknodeDelivery("block_with_receipts", [{ block, receipts: [zippedReceipt] }], Number(block.number)),
    );
    const headers: Record<string, string> = {
      ...quicknodeHeaders(json, QN_TOKEN),
      "content-encoding": "gzip",
    };
    const gz = await post("quicknode", gzipSync(json), headers);
    expect(gz.status).toBe(200);
    expect(await apiTx(zipped)).toMatchObject({ txHash: zipped, functionName: "disperseToken" });
    const stored = (await getDeliveries(db.database.db)).find((d) => d.deliveryId === headers["x-qn-nonce"]);
    expect(stored?.rawBody).toBe(json);
    expect(broadcastHashes()).toEqual([plain, zipped]);
  });

  test("error: unsigned, wrongly signed, tampered and stale deliveries get 401 and store nothing", async () => {
    const hash = await disperse("ether", 4);
    const receipt = await receiptOf(hash);
    const body = addressActivityFor(hash, Number(receipt.blockNumber));
    const qnBody = JSON.stringify(quicknodeDelivery("receipts", [[receipt]], Number(receipt.blockNumber)));
    const before = await inboxSize();
    const now = Math.floor(Date.now() / 1000);
    const attempts: [string, string, Record<string, string>][] = [
      ["alchemy", body, { "content-type": "application/json" }],
      ["alchemy", body, alchemyHeaders(body, "whsec_someone_else")],
      ["alchemy", body.replace("0.3", "3"), alchemyHeaders(body, ALCHEMY_KEYS[1]!)],
      ["quicknode", qnBody, { "content-type": "application/json" }],
      ["quicknode", qnBody, quicknodeHeaders(qnBody, "wrong-token")],
      ["quicknode", qnBody, quicknodeHeaders(qnBody, QN_TOKEN, { timestampSeconds: now - 301 })],
      ["quicknode", qnBody, quicknodeHeaders(qnBody, QN_TOKEN, { timestampSeconds: now + 3_600 })],
    ];
    for (const [provider, sent, headers] of attempts) {
      const response = await post(provider, sent, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      const problem = await response.json();
      expect(problem).toMatchObject({
        status: 401,
        code: "INVALID_SIGNATURE",
        type: "/docs/errors#INVALID_SIGNATURE",
      });
      expect(JSON.stringify(problem)).not.toContain(QN_TOKEN);
    }
    expect(await inboxSize()).toBe(before);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await fetch(`${running.url}/api/tx/${hash}`)).status).toBe(404);
    expect(logLines.join("")).not.toContain(ALCHEMY_KEYS[1]!);
  });

  test("behavior: the same delivery replayed 20 times is stored and processed once", async () => {
    const hash = await disperse("ether", 1);
    const receipt = await receiptOf(hash);
    const body = addressActivityFor(hash, Number(receipt.blockNumber), "whevt_replayed_twenty_times");
    const headers = alchemyHeaders(body, ALCHEMY_KEYS[1]!);
    const statuses: string[] = [];
    for (let i = 0; i < 20; i++) {
      const response = await post("alchemy", body, headers);
      expect(response.status).toBe(200);
      statuses.push(((await response.json()) as { status: string }).status);
    }
    expect(statuses).toEqual(["accepted", ...Array(19).fill("duplicate")]);
    await apiTx(hash);
    const qnBody = JSON.stringify(quicknodeDelivery("receipts", [[receipt]], Number(receipt.blockNumber)));
    const qnHeaders = quicknodeHeaders(qnBody, QN_TOKEN, { nonce: "qn-replayed" });
    const qn = await Promise.all(Array.from({ length: 20 }, () => post("quicknode", qnBody, qnHeaders)));
    expect(qn.map((r) => r.status)).toEqual(Array(20).fill(200));

    const rows = await getDeliveries(db.database.db);
    expect(rows.filter((r) => r.deliveryId === "whevt_replayed_twenty_times")).toHaveLength(1);
    expect(rows.filter((r) => r.deliveryId === "qn-replayed")).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(broadcastHashes()).toEqual([hash]);
  });

  test("error: unknown provider or one without a config section: 404; signed non-JSON: 400", async () => {
    const unknown = await post("etherscan", "{}", { "content-type": "application/json" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: "NOT_FOUND" });

    const other = await buildApp(running.pipeline.common, {
      database: db.database,
      chain: running.pipeline.chain,
    });
    const alchemyOnly = { ...config, webhooks: { alchemy: { signingKeys: ALCHEMY_KEYS } } };
    const onlyAlchemy = await buildApp(
      { ...running.pipeline.common, config: alchemyOnly },
      { database: db.database, chain: running.pipeline.chain },
    );
    try {
      const body = JSON.stringify(quicknodeDelivery("logs", [], 1));
      const response = await onlyAlchemy.inject({
        method: "POST",
        url: "/api/webhooks/quicknode",
        headers: quicknodeHeaders(body, QN_TOKEN),
        payload: body,
      });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ code: "NOT_FOUND" });
      const notJson = "not json";
      const bad = await other.inject({
        method: "POST",
        url: "/api/webhooks/alchemy",
        headers: { ...alchemyHeaders(notJson, ALCHEMY_KEYS[0]!), "content-type": "text/plain" },
        payload: notJson,
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ code: "INVALID_BODY" });

      // The raw bytes are what is signed: any content type, or none, is read as is.
      const json = JSON.stringify({
        id: "whevt_no_content_type",
        type: "ADDRESS_ACTIVITY",
        event: { activity: [] },
      });
      const { "content-type": _ignored, ...bare } = alchemyHeaders(json, ALCHEMY_KEYS[0]!);
      const untyped = await other.inject({
        method: "POST",
        url: "/api/webhooks/alchemy",
        headers: bare,
        payload: Buffer.from(json),
      });
      expect(untyped.statusCode).toBe(200);
      expect(untyped.json()).toEqual({ status: "accepted", deliveryId: "whevt_no_content_type" });
      const brotli = await other.inject({
        method: "POST",
        url: "/api/webhooks/alchemy",
        headers: { ...alchemyHeaders(json, ALCHEMY_KEYS[0]!), "content-encoding": "br" },
        payload: json,
      });
      expect(brotli.statusCode).toBe(415);
      expect(brotli.json()).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
    } finally {
      await other.close();
      await onlyAlchemy.close();
    }
  });

  test("behavior: Alchemy's event.error variant is logged and answered 200", async () => {
    const body = JSON.stringify({
      webhookId: "wh_a55wfsvq5h8n8u3z",
      id: "whevt_error_variant",
      createdAt: new Date().toISOString(),
      type: "GRAPHQL",
      event: { error: "GraphQL query execution timed out", data: null },
    });
    const response = await post("alchemy", body, alchemyHeaders(body, ALCHEMY_KEYS[0]!));
    expect(response.status).toBe(200);
    expect(logLines.some((l) => l.includes("GraphQL query execution timed out"))).toBe(true);
  });

  test("behavior: a delivery acknowledged before a crash is processed by the next worker", async () => {
    await stop(running);
    running = await start({ worker: false });
    const hash = await disperse("ether", 3);
    const receipt = await receiptOf(hash);
    const body = addressActivityFor(hash, Number(receipt.blockNumber), "whevt_before_crash");
    expect((await post("alchemy", body, alchemyHeaders(body, ALCHEMY_KEYS[1]!))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await fetch(`${running.url}/api/tx/${hash}`)).status).toBe(404);
    const [row] = await db.database.db
      .select()
      .from(webhookInbox)
      .where(eq(webhookInbox.deliveryId, "whevt_before_crash"));
    expect(row?.status).toBe("pending");

    // The process dies; a new one starts over the same database.
    await stop(running);
    running = await start({ worker: true });
    expect(await apiTx(hash)).toMatchObject({ txHash: hash, source: "webhook" });
    expect(broadcastHashes()).toEqual([hash]);
    expect(
      (await getDeliveries(db.database.db)).find((d) => d.deliveryId === "whevt_before_crash")?.status,
    ).toBe("done");
  });
});

describe("startProtoscan wires the receiver and the worker (role all)", () => {
  test("default: a signed delivery to the running server ends up in GET /api/tx/:hash", {
    timeout: 120_000,
  }, async () => {
    const chain = await setupDemoChain();
    const protoscan = await startProtoscan({
      config: { ...chain.config, webhooks: { alchemy: { signingKeys: ["whsec_wired"] } } },
      role: "all",
      host: "127.0.0.1",
      port: 0,
      dataDir: "memory://",
      logLevel: "silent",
    }).catch(async (error: unknown) => {
      await chain.anvil.stop();
      throw error;
    });
    try {
      expect(protoscan.inboxWorker).not.toBeNull();
      const wallet = createWalletClient({ transport: http(chain.anvil.url) });
      const [user, other] = chain.deployment.users as [Hex, Hex];
      const hash = await wallet.sendTransaction({
        account: user,
        chain: null,
        to: chain.deployment.contracts.disperse,
        value: 5n,
        data: encodeFunctionData({
          abi: chain.deployment.abis.disperse,
          functionName: "disperseEther",
          args: [[other], [5n]],
        }),
      });
      const body = JSON.stringify(
        alchemyAddressActivity([
          {
            hash,
            blockNum: 1,
            fromAddress: user,
            toAddress: other,
            category: "external",
            value: 0,
            rawValue: 5n,
          },
        ]),
      );
      const response = await fetch(`${protoscan.url}/api/webhooks/alchemy`, {
        method: "POST",
        headers: alchemyHeaders(body, "whsec_wired"),
        body,
      });
      expect(response.status).toBe(200);
      const deadline = Date.now() + 15_000;
      let status = 0;
      while (Date.now() < deadline) {
        status = (await fetch(`${protoscan.url}/api/tx/${hash}`)).status;
        if (status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(status).toBe(200);
    } finally {
      await protoscan.stop();
      await chain.anvil.stop();
    }
  });
});
