import { ConfigError } from "../internal/errors.ts";
import { checkConfigFile } from "./checkConfigFile.ts";
import { loadAbi } from "./loadAbi.ts";
import { parseConfigFile } from "./parseConfigFile.ts";
import type {
  Address,
  Config,
  ConfigFile,
  ContractConfig,
  LoadedAbi,
  ProtocolConfig,
  TokenConfig,
} from "./schema.ts";

type ProtocolFile = ConfigFile["protocols"][number];
type TokenFile = ConfigFile["tokens"][number];

/**
 * Turn a config file into the `Config` every subsystem receives (SPEC §1 "Config file"): validate it and fill
 * in defaults (so a hand-built object may leave defaulted keys out), run the cross-field checks, load ABI
 * files relative to `baseDir` (the working directory when null), lowercase every address, and derive the
 * defaults that depend on other keys: a protocol's `tvlAddresses` (its exclusive contracts) and a token's
 * `exclusive` (its `official`). `prices.api.baseUrl` loses its trailing slashes. Env interpolation is not
 * done here: see `loadConfig`.
 *
 * The result's `path` is null; `loadConfig` sets it.
 *
 * @throws {ConfigError} listing every problem, each naming its key path.
 */
export function resolveConfig(file: ConfigFile, baseDir: string | null): Config {
  const valid = parseConfigFile(file);
  const issues = checkConfigFile(valid);
  const cache = new Map<string, LoadedAbi>();
  const protocols = valid.protocols.map((protocol, p) =>
    resolveProtocol(protocol, p, baseDir, cache, issues),
  );
  if (issues.length > 0) throw new ConfigError(issues);

  const { rpc, prices } = valid;
  return {
    path: null,
    chain: { id: valid.chain.id, name: valid.chain.name },
    rpc: {
      urls: [...rpc.urls],
      ...(rpc.maxRequestsPerSecond !== undefined && { maxRequestsPerSecond: rpc.maxRequestsPerSecond }),
      batchSize: rpc.batchSize,
      timeoutMs: rpc.timeoutMs,
    },
    indexer: { ...valid.indexer },
    api: {
      corsOrigins: [...valid.api.corsOrigins],
      rateLimitPerMinute: valid.api.rateLimitPerMinute,
      trackTxApiKeys: [...valid.api.trackTxApiKeys],
      etherscanApiKeys: [...valid.api.etherscanApiKeys],
    },
    ui: { enabled: valid.ui?.enabled ?? true },
    webhooks: {
      ...(valid.webhooks.alchemy && { alchemy: { signingKeys: [...valid.webhooks.alchemy.signingKeys] } }),
      ...(valid.webhooks.quicknode && {
        quicknode: { securityTokens: [...valid.webhooks.quicknode.securityTokens] },
      }),
    },
    prices: {
      cacheSeconds: prices.cacheSeconds,
      ...(prices.api && {
        api: {
          kind: prices.api.kind,
          ...(prices.api.apiKey !== undefined && { apiKey: prices.api.apiKey }),
          ...(prices.api.network !== undefined && { network: prices.api.network }),
          ...(prices.api.baseUrl !== undefined && { baseUrl: prices.api.baseUrl.replace(/\/+$/, "") }),
        },
      }),
    },
    protocols,
    tokens: valid.tokens.map(resolveToken),
  };
}

function resolveProtocol(
  protocol: ProtocolFile,
  p: number,
  baseDir: string | null,
  cache: Map<string, LoadedAbi>,
  issues: string[],
): ProtocolConfig {
  const contracts = protocol.contracts.map((contract, c): ContractConfig => {
    let abi: LoadedAbi = [];
    try {
      abi = loadAbi(contract.abi, baseDir, cache);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const issue of error.issues) issues.push(`protocols[${p}].contracts[${c}].abi: ${issue}`);
    }
    return { name: contract.name, address: lower(contract.address), abi, exclusive: contract.exclusive };
  });
  const tvlAddresses =
    protocol.tvlAddresses?.map(lower) ?? contracts.filter((c) => c.exclusive).map((c) => c.address);
  return {
    id: protocol.id,
    name: protocol.name,
    contracts,
    tvlAddresses: [...new Set(tvlAddresses)],
    actions: { ...protocol.actions },
  };
}

function resolveToken(token: TokenFile): TokenConfig {
  const { price } = token;
  return {
    address: lower(token.address),
    symbol: token.symbol,
    name: token.name,
    decimals: token.decimals,
    protocol: token.protocol,
    color: token.color,
    logo: token.logo,
    official: token.official,
    exclusive: token.exclusive ?? token.official,
    ...(price && {
      price: {
        ...(price.pool !== undefined && { pool: lower(price.pool) }),
        ...(price.quote !== undefined && { quote: lower(price.quote) }),
        ...(price.minQuoteLiquidity !== undefined && { minQuoteLiquidity: price.minQuoteLiquidity }),
        ...(price.usd !== undefined && { usd: price.usd }),
      },
    }),
  };
}

function lower(address: string): Address {
  return address.toLowerCase() as Address;
}
