import { expect, test } from "vitest";
import { EtherscanError } from "./etherscanEnvelope.ts";
import {
  addressParam,
  blockParam,
  mergeParams,
  pagingParams,
  tagParam,
  txHashParam,
} from "./etherscanParams.ts";

const WINDOW = "Result window is too large, PageNo x Offset size must be less than or equal to 10000";

function errorOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof EtherscanError) return error.result;
    throw error;
  }
  return undefined;
}

test("mergeParams: the body wins, repeated values keep the last, non-scalars are dropped", () => {
  expect(
    mergeParams(
      { module: "account", action: ["a", "txlist"], page: 2 },
      { module: "proxy", nested: { a: 1 }, list: [{}], flag: true },
    ),
  ).toEqual({ module: "proxy", action: "txlist", page: "2", flag: "true" });
  expect(mergeParams(null, "text", [1], undefined)).toEqual({});
});

test("addressParam: lowercase; missing or malformed is Etherscan's text", () => {
  expect(addressParam({ address: "0x5AAEB6053F3E94C9b9A09f33669435E7Ef1BeAed" })).toBe(
    "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed",
  );
  expect(errorOf(() => addressParam({}))).toBe("Error! Invalid address format");
  expect(errorOf(() => addressParam({ address: "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beae" }))).toBe(
    "Error! Invalid address format",
  );
  expect(errorOf(() => txHashParam({ txhash: "0x12" }))).toBe("Error! Invalid txhash format");
});

test("pagingParams: defaults asc, every row up to the window; page x offset above 10,000 refused", () => {
  expect(pagingParams({}, { maxOffset: 10_000 })).toEqual({
    page: 1,
    offset: 10_000,
    sort: "asc",
    startBlock: 0,
    endBlock: Number.MAX_SAFE_INTEGER,
  });
  expect(
    pagingParams(
      { page: "100", offset: "100", sort: "desc", startblock: "5", endblock: "9" },
      { maxOffset: 10_000 },
    ),
  ).toMatchObject({ page: 100, offset: 100, sort: "desc", startBlock: 5, endBlock: 9 });
  expect(errorOf(() => pagingParams({ page: "101", offset: "100" }, { maxOffset: 10_000 }))).toBe(WINDOW);
  expect(errorOf(() => pagingParams({ offset: "10001" }, { maxOffset: 10_000 }))).toBe(WINDOW);
  expect(errorOf(() => pagingParams({ sort: "up" }, { maxOffset: 10_000 }))).toBe(
    "Error! Invalid sort order",
  );
  expect(errorOf(() => pagingParams({ page: "-1" }, { maxOffset: 10_000 }))).toBe("Error! Invalid page");
});

test("pagingParams: getLogs caps a page at 1,000 and reads fromBlock/toBlock (decimal, hex or latest)", () => {
  const logs = { maxOffset: 1000, from: "fromBlock", to: "toBlock" };
  expect(pagingParams({ offset: "5000", fromBlock: "0x10", toBlock: "latest" }, logs)).toMatchObject({
    offset: 1000,
    startBlock: 16,
    endBlock: Number.MAX_SAFE_INTEGER,
  });
  expect(pagingParams({ page: "1", offset: "0" }, logs)).toMatchObject({ page: 1, offset: 1000 });
  expect(errorOf(() => blockParam({ fromBlock: "1e3" }, "fromBlock", 0))).toBe("Error! Invalid fromBlock");
});

test("tagParam: JSON-RPC tags and hex numbers (leading zeros dropped); anything else refused", () => {
  expect(tagParam({})).toBe("latest");
  expect(tagParam({ tag: "earliest" })).toBe("earliest");
  expect(tagParam({ tag: "0x00ff" })).toBe("0xff");
  expect(errorOf(() => tagParam({ tag: "255" }))).toBe("Error! Invalid tag");
});
