/**
 * Name the kind of action a call is (SPEC §3): the protocol's `actions` override for the function, else a
 * built-in name recognised from common function names, else `contractCall`. A call with no input is a
 * plain native-value transfer (`nativeTransfer`).
 */
export function actionType(
  functionName: string,
  overrides: Readonly<Record<string, string>> | undefined,
  plainTransfer: boolean,
): string {
  if (plainTransfer) return "nativeTransfer";
  const override = overrides?.[functionName];
  if (override) return override;
  for (const [pattern, type] of BUILT_IN) if (pattern.test(functionName)) return type;
  return "contractCall";
}

/** Ordered: the first match wins (`unstake` before `stake`, `removeLiquidity` before anything else). */
const BUILT_IN: readonly (readonly [RegExp, string])[] = [
  [/^(transfer|transferFrom|safeTransfer|safeTransferFrom)$/, "transfer"],
  [/^(approve|permit|increaseAllowance|decreaseAllowance|setApprovalForAll)$/, "approve"],
  [/^swap/i, "swap"],
  [/^addLiquidity/, "addLiquidity"],
  [/^removeLiquidity/, "removeLiquidity"],
  [/^unstake/i, "unstake"],
  [/^stake/i, "stake"],
  [/^(deposit|supply)/i, "deposit"],
  [/^(withdraw|redeem|exit$)/i, "withdraw"],
  [/^(claim|getReward|harvest|collect)/i, "claim"],
  [/^mint/i, "mint"],
  [/^burn/i, "burn"],
];
