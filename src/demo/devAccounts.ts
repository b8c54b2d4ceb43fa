import type { Address } from "../config/schema.ts";

/** The mnemonic anvil (and Hardhat) derive their default dev accounts from. Public: never use it for real funds. */
export const DEV_MNEMONIC = "test test test test test test test test test test test junk";

/**
 * The first ten accounts of {@link DEV_MNEMONIC} (m/44'/60'/0'/0/i), lowercase. anvil unlocks them, so the demo
 * sends with `eth_sendTransaction` and lets the node sign. Kept as constants because deriving them takes a
 * noticeable fraction of a second; `devAccounts.test.ts` checks them against the derivation.
 */
export const DEV_ACCOUNTS: readonly Address[] = [
  "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
  "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
  "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
  "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65",
  "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc",
  "0x976ea74026e726554db657fa54763abd0c3a0aa9",
  "0x14dc79964da2c08b23698b3d3cc7ca32193d9955",
  "0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f",
  "0xa0ee7a142d267c1f36714e4a8f75612f20a79720",
];

/** Account 0 deploys and owns the demo contracts. */
export const DEPLOYER: Address = DEV_ACCOUNTS[0]!;

/** Accounts 1..5 are the demo's users: funded, approved, and the senders of generated activity. */
export const DEMO_USERS: readonly Address[] = DEV_ACCOUNTS.slice(1, 6);
