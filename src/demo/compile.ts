import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Abi, Hex } from "viem";
import { NonRetryableError } from "../internal/errors.ts";
import { isRecord } from "../internal/isRecord.ts";
import { REPO_ROOT } from "../internal/repoRoot.ts";

/** The demo contracts compiled from `contracts/*.sol`. */
export type DemoContractName = "DemoToken" | "StakingVault" | "Disperse";

/** What deploying a contract needs: its ABI and creation bytecode. */
export type Artifact = { abi: Abi; bytecode: Hex };

export type CompileResult = {
  artifacts: Record<DemoContractName, Artifact>;
  /** True when the output came from `.cache/contracts/` without running solc. */
  fromCache: boolean;
  /** The cache file that holds (or now holds) the output. */
  cacheFile: string;
};

export type CompileOptions = {
  /** Folder with the `.sol` sources (default: the repository's `contracts/`). */
  contractsDir?: string;
  /** Folder for cached outputs (default: the repository's `.cache/contracts/`). */
  cacheDir?: string;
};

const require = createRequire(import.meta.url);
const CONTRACT_NAMES: readonly DemoContractName[] = ["DemoToken", "StakingVault", "Disperse"];

// Part of the cache key: a change here must never be served a stale output.
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
} as const;

type SolcCompile = (input: string, callbacks: { import: (path: string) => ImportResult }) => string;
type ImportResult = { contents: string } | { error: string };

/**
 * Compile the demo contracts with solc-js (offline, the `solc` npm package) and return typed artifacts.
 *
 * The output is cached in `.cache/contracts/<sha256 of sources + solc and OpenZeppelin versions + settings>.json`,
 * so only the first run pays for solc (several seconds); later runs read one file. Imports such as
 * `@openzeppelin/contracts/...` resolve from node_modules, whatever the current directory.
 */
export async function compileDemoContracts(options: CompileOptions = {}): Promise<CompileResult> {
  const contractsDir = options.contractsDir ?? join(REPO_ROOT, "contracts");
  const cacheDir = options.cacheDir ?? join(REPO_ROOT, ".cache", "contracts");
  const sources = await readSources(contractsDir);
  const key = cacheKey(sources);
  const cacheFile = join(cacheDir, `${key}.json`);

  const cached = await readCache(cacheFile);
  if (cached) return { artifacts: cached, fromCache: true, cacheFile };

  const artifacts = await runSolc(sources);
  await mkdir(cacheDir, { recursive: true });
  // Write then rename, so a parallel test process never reads a half-written file.
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(artifacts));
  await rename(tmp, cacheFile);
  return { artifacts, fromCache: false, cacheFile };
}

async function readSources(dir: string): Promise<Record<string, string>> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sol")).sort();
  const sources: Record<string, string> = {};
  for (const file of files) sources[file] = await readFile(join(dir, file), "utf8");
  return sources;
}

function packageVersion(name: string): string {
  const pkg: unknown = require(`${name}/package.json`);
  return isRecord(pkg) && typeof pkg.version === "string" ? pkg.version : "unknown";
}

function cacheKey(sources: Record<string, string>): string {
  const hash = createHash("sha256");
  hash.update(`solc@${packageVersion("solc")}\n`);
  hash.update(`@openzeppelin/contracts@${packageVersion("@openzeppelin/contracts")}\n`);
  hash.update(JSON.stringify(SETTINGS));
  for (const [name, content] of Object.entries(sources)) hash.update(`\n--- ${name}\n${content}`);
  return hash.digest("hex").slice(0, 32);
}

async function readCache(file: string): Promise<Record<DemoContractName, Artifact> | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return undefined; // no cache yet
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return parseArtifacts(parsed);
  } catch {
    return undefined; // a corrupt cache file is rebuilt
  }
}

function parseArtifacts(value: unknown): Record<DemoContractName, Artifact> | undefined {
  if (!isRecord(value)) return undefined;
  const out: Partial<Record<DemoContractName, Artifact>> = {};
  for (const name of CONTRACT_NAMES) {
    const entry = value[name];
    if (!isRecord(entry) || !Array.isArray(entry.abi) || typeof entry.bytecode !== "string") return undefined;
    if (!/^0x[0-9a-f]+$/i.test(entry.bytecode)) return undefined;
    out[name] = { abi: entry.abi as Abi, bytecode: entry.bytecode as Hex };
  }
  return out as Record<DemoContractName, Artifact>;
}

/** Resolve `@openzeppelin/...` (or any package path) imports from node_modules. */
function findImport(path: string): ImportResult {
  try {
    return { contents: readFileSync(require.resolve(path), "utf8") };
  } catch {
    return { error: `import not found: ${path}` };
  }
}

async function runSolc(sources: Record<string, string>): Promise<Record<DemoContractName, Artifact>> {
  const solc: { compile: SolcCompile } = (await import("solc")).default;
  const input = {
    language: "Solidity",
    sources: Object.fromEntries(Object.entries(sources).map(([name, content]) => [name, { content }])),
    settings: SETTINGS,
  };
  const output: unknown = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport }));
  if (!isRecord(output)) throw new NonRetryableError("solc returned no output");

  const errors = Array.isArray(output.errors) ? output.errors.filter(isRecord) : [];
  const fatal = errors.filter((e) => e.severity === "error");
  if (fatal.length > 0) {
    throw new NonRetryableError("the demo contracts do not compile", {
      details: fatal.map((e) => String(e.formattedMessage ?? e.message)).join("\n"),
    });
  }

  const contracts = isRecord(output.contracts) ? output.contracts : {};
  const flat: Record<string, { abi: unknown; bytecode: string }> = {};
  for (const [file, byName] of Object.entries(contracts)) {
    if (!file.endsWith(".sol") || file.includes("/") || !isRecord(byName)) continue;
    for (const [name, compiled] of Object.entries(byName)) {
      if (!isRecord(compiled) || !isRecord(compiled.evm) || !isRecord(compiled.evm.bytecode)) continue;
      flat[name] = { abi: compiled.abi, bytecode: `0x${String(compiled.evm.bytecode.object)}` };
    }
  }
  const artifacts = parseArtifacts(flat);
  if (!artifacts) {
    throw new NonRetryableError("solc output is missing a demo contract", {
      details: `expected ${CONTRACT_NAMES.join(", ")}; got ${Object.keys(flat).join(", ")}`,
    });
  }
  return artifacts;
}
