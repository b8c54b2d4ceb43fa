import { createRequire } from "node:module";
import { type Abi, type Hex, keccak256 } from "viem";
import { NonRetryableError } from "../internal/errors.ts";
import type { Artifact } from "./compile.ts";

/** The Uniswap V2 contracts the demo deploys, from the build artifacts shipped in the npm packages. */
export type UniswapArtifacts = {
  factory: Artifact;
  pair: Artifact;
  router: Artifact;
  weth9: Artifact;
};

/**
 * The init code hash hard-coded in `UniswapV2Library.pairFor` of @uniswap/v2-periphery (Router02 computes pair
 * addresses with it instead of calling `factory.getPair`). It must equal keccak256 of the pair creation code
 * the factory deploys with CREATE2, or every router call would target an empty address.
 */
export const ROUTER_PAIR_INIT_CODE_HASH: Hex =
  "0x96e8ac4277198ff8b6f785478aa9a39f403cb768dd02cbee326c3e7da348845f";

const require = createRequire(import.meta.url);

/**
 * Load the Uniswap V2 artifacts: UniswapV2Factory and UniswapV2Pair from `@uniswap/v2-core/build`,
 * UniswapV2Router02 and WETH9 from `@uniswap/v2-periphery/build`.
 *
 * Checks what the router relies on: keccak256(pair bytecode) equals {@link ROUTER_PAIR_INIT_CODE_HASH}, the
 * router's bytecode embeds that hash, and the factory's bytecode embeds the pair creation code. It does for
 * the published packages; a mismatch throws rather than deploying a router that cannot find its pairs.
 */
export function loadUniswapArtifacts(): UniswapArtifacts {
  const artifacts: UniswapArtifacts = {
    factory: loadArtifact("@uniswap/v2-core/build/UniswapV2Factory.json"),
    pair: loadArtifact("@uniswap/v2-core/build/UniswapV2Pair.json"),
    router: loadArtifact("@uniswap/v2-periphery/build/UniswapV2Router02.json"),
    weth9: loadArtifact("@uniswap/v2-periphery/build/WETH9.json"),
  };
  const pairHash = keccak256(artifacts.pair.bytecode);
  const problems: string[] = [];
  if (pairHash !== ROUTER_PAIR_INIT_CODE_HASH)
    problems.push(`keccak256(UniswapV2Pair bytecode) is ${pairHash}`);
  if (!artifacts.router.bytecode.includes(ROUTER_PAIR_INIT_CODE_HASH.slice(2))) {
    problems.push("UniswapV2Router02 bytecode does not embed the expected init code hash");
  }
  if (!artifacts.factory.bytecode.includes(artifacts.pair.bytecode.slice(2))) {
    problems.push("UniswapV2Factory bytecode does not embed the UniswapV2Pair creation code");
  }
  if (problems.length > 0) {
    throw new NonRetryableError("Uniswap V2 artifacts do not agree on the pair init code hash", {
      details: problems.join("; "),
    });
  }
  return artifacts;
}

function loadArtifact(path: string): Artifact {
  const json: unknown = require(path);
  if (typeof json !== "object" || json === null) throw new NonRetryableError(`not an artifact: ${path}`);
  const abi: unknown = "abi" in json ? json.abi : undefined;
  const raw: unknown = "bytecode" in json ? json.bytecode : undefined;
  if (!Array.isArray(abi) || typeof raw !== "string" || !/^(0x)?[0-9a-fA-F]+$/.test(raw)) {
    throw new NonRetryableError(`artifact without abi and bytecode: ${path}`);
  }
  const bytecode = (raw.startsWith("0x") ? raw : `0x${raw}`).toLowerCase() as Hex;
  return { abi: abi as Abi, bytecode };
}
