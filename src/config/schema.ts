import Type, { type Static } from "typebox";

/**
 * The schema of `protoscan.config.yaml` (SPEC §1). It is the single source of truth: the loader validates
 * with it, applies its defaults, and `docs/config.schema.json` is generated from it.
 *
 * `x-error` is our own annotation: the message the loader prints when a value breaks the constraint, so
 * that errors read `protocols[0].contracts[1].address: not a 20-byte hex address`.
 */

const Address = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "20-byte hex address, any case",
  "x-error": "not a 20-byte hex address",
});

const Decimal = Type.String({
  pattern: "^[0-9]+(\\.[0-9]+)?$",
  description: "non-negative decimal number as a string",
  "x-error": "not a non-negative decimal string",
});

const AbiSource = Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.Object({}))], {
  description:
    "path of a JSON ABI (relative to the config file; a Hardhat/Foundry artifact with an `abi` key works too) or an inline ABI array",
  "x-error": "must be a path to an ABI file or an inline ABI array",
});

const Identifier = Type.String({
  pattern: "^[a-z0-9][a-z0-9_-]{0,63}$",
  description: "lowercase identifier used in URLs",
  "x-error": "must be a lowercase identifier (a-z, 0-9, _ and -, at most 64 characters)",
});

/**
 * An `actions` override: what `actionType` the API serves and filters on (`?actionType=`, at most 64
 * characters there). No control characters: the value is stored as text, and PostgreSQL refuses U+0000.
 */
const ActionType = Type.String({
  pattern: "^[^\\u0000-\\u001f\\u007f]{1,64}$",
  description: "the actionType to store for calls of this function (1-64 characters, no control characters)",
  "x-error": "must be 1 to 64 characters without control characters",
});

export const ContractSchema = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    address: Address,
    abi: AbiSource,
    exclusive: Type.Boolean({
      default: true,
      description:
        "true: scanned by the polling indexer; false: a shared contract reached via track-tx and webhooks",
    }),
  },
  { additionalProperties: false },
);

export const ProtocolSchema = Type.Object(
  {
    id: Identifier,
    name: Type.String({ minLength: 1 }),
    contracts: Type.Array(ContractSchema, { default: [] }),
    tvlAddresses: Type.Optional(
      Type.Array(Address, {
        description:
          "addresses whose token holdings count as TVL (default: the protocol's exclusive contracts)",
      }),
    ),
    actions: Type.Record(Type.String(), ActionType, {
      default: {},
      description: "functionName -> actionType overrides",
    }),
  },
  { additionalProperties: false },
);

export const TokenPriceSchema = Type.Object(
  {
    pool: Type.Optional(Address),
    quote: Type.Optional(Address),
    minQuoteLiquidity: Type.Optional(Decimal),
    usd: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);

export const TokenSchema = Type.Object(
  {
    address: Address,
    symbol: Type.String({ minLength: 1 }),
    name: Type.String({ minLength: 1 }),
    decimals: Type.Integer({ minimum: 0, maximum: 255 }),
    protocol: Identifier,
    color: Type.String({
      pattern: "^#[0-9a-fA-F]{6}$",
      default: "#888888",
      "x-error": "not a #rrggbb colour",
    }),
    logo: Type.String({ default: "" }),
    official: Type.Boolean({ default: false }),
    exclusive: Type.Optional(
      Type.Boolean({ description: "scan all its Transfer logs (default: equal to `official`)" }),
    ),
    price: Type.Optional(TokenPriceSchema),
  },
  { additionalProperties: false },
);

export const ConfigFileSchema = Type.Object(
  {
    $schema: Type.Optional(
      Type.String({ description: "URI of this JSON Schema, for editors (ignored by protoscan)" }),
    ),
    chain: Type.Object(
      {
        id: Type.Integer({ minimum: 1 }),
        name: Type.String({ default: "unknown" }),
      },
      { additionalProperties: false },
    ),
    rpc: Type.Object(
      {
        urls: Type.Array(
          Type.String({
            pattern: "^(https?|wss?)://",
            "x-error": "not an http(s) or ws(s) URL",
          }),
          { minItems: 1 },
        ),
        maxRequestsPerSecond: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
        batchSize: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
        timeoutMs: Type.Integer({ minimum: 100, default: 10_000 }),
      },
      { additionalProperties: false, default: { urls: ["http://127.0.0.1:8545"] } },
    ),
    indexer: Type.Object(
      {
        pollIntervalSeconds: Type.Number({ exclusiveMinimum: 0, default: 300 }),
        logChunkBlocks: Type.Integer({ minimum: 1, default: 5000 }),
        startBlock: Type.Integer({ minimum: 0, default: 0 }),
        confirmations: Type.Integer({ minimum: 0, default: 0 }),
      },
      { additionalProperties: false, default: {} },
    ),
    api: Type.Object(
      {
        corsOrigins: Type.Array(Type.String(), { default: ["*"] }),
        rateLimitPerMinute: Type.Integer({ minimum: 1, default: 600 }),
        trackTxApiKeys: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
        etherscanApiKeys: Type.Array(Type.String({ minLength: 1 }), {
          default: [],
          description:
            "keys the Etherscan-compatible API (/api, /v2/api) accepts as `apikey`; empty: any key or none is accepted",
        }),
      },
      { additionalProperties: false, default: {} },
    ),
    ui: Type.Optional(
      Type.Object(
        {
          enabled: Type.Boolean({
            default: true,
            description: "serve the web explorer at / and every path outside the API (SPEC §12)",
          }),
        },
        { additionalProperties: false },
      ),
    ),
    webhooks: Type.Object(
      {
        alchemy: Type.Optional(
          Type.Object(
            { signingKeys: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }) },
            { additionalProperties: false },
          ),
        ),
        quicknode: Type.Optional(
          Type.Object(
            { securityTokens: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }) },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    prices: Type.Object(
      {
        cacheSeconds: Type.Number({ minimum: 0, default: 300 }),
        api: Type.Optional(
          Type.Object(
            {
              kind: Type.Union([Type.Literal("alchemy"), Type.Literal("defillama")]),
              apiKey: Type.Optional(Type.String()),
              network: Type.Optional(Type.String({ minLength: 1 })),
              baseUrl: Type.Optional(Type.String({ pattern: "^https?://", "x-error": "not an http(s) URL" })),
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false, default: {} },
    ),
    protocols: Type.Array(ProtocolSchema, { default: [] }),
    tokens: Type.Array(TokenSchema, { default: [] }),
  },
  { additionalProperties: false },
);

/** The config file as written (after env interpolation and defaults). */
export type ConfigFile = Static<typeof ConfigFileSchema>;

/** An ABI after loading: viem's `Abi` shape, validated only as an array of objects. */
export type LoadedAbi = readonly Record<string, unknown>[];

/** A lowercase 0x-prefixed 20-byte hex string. Addresses are lowercase everywhere inside protoscan. */
export type Address = `0x${string}`;

export type ContractConfig = {
  name: string;
  address: Address;
  abi: LoadedAbi;
  exclusive: boolean;
};

export type ProtocolConfig = {
  id: string;
  name: string;
  contracts: ContractConfig[];
  /** Resolved: the configured list, or the protocol's exclusive contracts. */
  tvlAddresses: Address[];
  actions: Record<string, string>;
};

export type TokenConfig = {
  address: Address;
  symbol: string;
  name: string;
  decimals: number;
  protocol: string;
  color: string;
  logo: string;
  official: boolean;
  /** Resolved: the configured value, or `official`. */
  exclusive: boolean;
  price?: {
    pool?: Address;
    quote?: Address;
    /** In whole quote tokens. */
    minQuoteLiquidity?: string;
    usd?: number;
  };
};

/**
 * The resolved configuration every subsystem receives: env interpolated, defaults applied, ABI files loaded,
 * addresses lowercased, derived defaults (tvlAddresses, token.exclusive) filled in.
 */
export type Config = {
  /** Absolute path of the file it was loaded from, or null for an in-memory config. */
  path: string | null;
  chain: { id: number; name: string };
  rpc: { urls: string[]; maxRequestsPerSecond?: number; batchSize: number; timeoutMs: number };
  indexer: { pollIntervalSeconds: number; logChunkBlocks: number; startBlock: number; confirmations: number };
  api: {
    corsOrigins: string[];
    rateLimitPerMinute: number;
    trackTxApiKeys: string[];
    etherscanApiKeys: string[];
  };
  /** The web explorer (SPEC §12); absent means enabled. */
  ui?: { enabled: boolean };
  webhooks: {
    alchemy?: { signingKeys: string[] };
    quicknode?: { securityTokens: string[] };
  };
  prices: {
    cacheSeconds: number;
    api?: { kind: "alchemy" | "defillama"; apiKey?: string; network?: string; baseUrl?: string };
  };
  protocols: ProtocolConfig[];
  tokens: TokenConfig[];
};
