import type { NotifiedTable } from "../../store/changeNotices.ts";

/**
 * The change notices that empty a cache of bodies holding USD values at block time (SPEC §10.2): writes to
 * `price_history` (an api backfill arriving, a price recorded), announced by migration 0015's trigger.
 * Pass as `alsoChangedBy.tables` of `createEventCache`.
 */
export const PRICE_HISTORY_CHANGES: readonly NotifiedTable[] = ["price_history"];
