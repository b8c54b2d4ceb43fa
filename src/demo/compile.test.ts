import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { compileDemoContracts } from "./compile.ts";

const cacheDir = await mkdtemp(join(tmpdir(), "protoscan-compile-"));
afterAll(() => rm(cacheDir, { recursive: true, force: true }));

const functionNames = (abi: readonly { type: string; name?: string }[]) =>
  abi.filter((item) => item.type === "function").map((item) => item.name);

test("default", async () => {
  const { artifacts } = await compileDemoContracts();
  expect(Object.keys(artifacts).sort()).toEqual(["DemoToken", "Disperse", "StakingVault"]);
  for (const artifact of Object.values(artifacts)) expect(artifact.bytecode).toMatch(/^0x[0-9a-f]{200,}$/);
  expect(functionNames(artifacts.DemoToken.abi)).toEqual(
    expect.arrayContaining(["mint", "transfer", "decimals"]),
  );
  expect(functionNames(artifacts.StakingVault.abi)).toEqual(
    expect.arrayContaining(["deposit", "withdraw", "claim", "earned"]),
  );
  expect(functionNames(artifacts.Disperse.abi)).toEqual(
    expect.arrayContaining(["disperseToken", "disperseEther"]),
  );
  const events = artifacts.StakingVault.abi.filter((item) => item.type === "event").map((item) => item.name);
  expect(events).toEqual(expect.arrayContaining(["Deposited", "Withdrawn", "Claimed"]));
});

test("behavior: cache hit on the second call", async () => {
  const first = await compileDemoContracts({ cacheDir });
  expect(first.fromCache).toBe(false);
  expect(first.cacheFile).toMatch(new RegExp(`^${cacheDir}/[0-9a-f]{32}\\.json$`));
  expect(await readdir(cacheDir)).toEqual([first.cacheFile.slice(cacheDir.length + 1)]);

  const started = performance.now();
  const second = await compileDemoContracts({ cacheDir });
  expect(performance.now() - started).toBeLessThan(3_000); // solc takes far longer
  expect(second.fromCache).toBe(true);
  expect(second.cacheFile).toBe(first.cacheFile);
  expect(second.artifacts).toEqual(first.artifacts);
});

test("behavior: a corrupt cache file is rebuilt", async () => {
  const { cacheFile } = await compileDemoContracts({ cacheDir });
  await writeFile(cacheFile, "{ not json");
  const rebuilt = await compileDemoContracts({ cacheDir });
  expect(rebuilt.fromCache).toBe(false);
  expect((await compileDemoContracts({ cacheDir })).fromCache).toBe(true);
});

test("error: a source that does not compile", async () => {
  const dir = await mkdtemp(join(tmpdir(), "protoscan-sol-"));
  try {
    await writeFile(join(dir, "Broken.sol"), "pragma solidity ^0.8.24; contract Broken { function f( }");
    await expect(compileDemoContracts({ contractsDir: dir, cacheDir: dir })).rejects.toThrow(
      "the demo contracts do not compile",
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
