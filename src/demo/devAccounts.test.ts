import { mnemonicToAccount } from "viem/accounts";
import { expect, test } from "vitest";
import { DEMO_USERS, DEPLOYER, DEV_ACCOUNTS, DEV_MNEMONIC } from "./devAccounts.ts";

test("default", () => {
  const derived = DEV_ACCOUNTS.map((_, i) =>
    mnemonicToAccount(DEV_MNEMONIC, { addressIndex: i }).address.toLowerCase(),
  );
  expect(derived).toEqual(DEV_ACCOUNTS);
  expect(DEPLOYER).toBe("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
  expect(DEMO_USERS).toEqual(DEV_ACCOUNTS.slice(1, 6));
  expect(DEMO_USERS).toHaveLength(5);
});
