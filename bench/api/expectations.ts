import type { Address } from "../../src/config/schema.ts";
import type { IndexedTransaction } from "../../src/decode/decodeTransaction.ts";
import { ZERO } from "./chainRecords.ts";

/**
 * What the seeded database must hold, computed on the side while the data is generated: the figures the
 * database's triggers maintain (counters, holders, distinct addresses) and the balances its delta arithmetic
 * keeps, to check them after seeding and to pick the benchmark's URLs (hashes, busiest address).
 */
export type Expectations = {
  /** current balance of `holder` in `token` (0 when never touched) */
  balance(token: Address, holder: Address): bigint;
  /** record a transfer (from the zero address: a mint) */
  move(token: Address, from: Address, to: Address, amount: bigint): void;
  /** record a stored transaction (its transfers were recorded with `move`) */
  addTransaction(tx: IndexedTransaction): void;
  transactions(): number;
  /** per protocol: transactions and distinct senders */
  protocols(): Map<string, { transactions: number; users: number }>;
  /** per token: transfers, holders with a positive balance, and the total supply (mints) */
  tokens(): Map<string, { transfers: number; holders: number; supply: bigint }>;
  /** distinct addresses taking part in transactions (`address_transactions` parties) */
  addresses(): number;
  /** the `count` addresses with the most transactions, most first, among `among` (or all) */
  busiest(count: number, among?: ReadonlySet<string>): { address: string; transactions: number }[];
  /** holders of `token`, largest balance first, ties by address (the holders page order) */
  topHolders(token: Address, limit: number, offset: number): { holder: string; balance: bigint }[];
  /** every transaction hash, in order */
  hashes(): readonly string[];
};

export function createExpectations(): Expectations {
  const balances = new Map<string, Map<string, bigint>>();
  const transfers = new Map<string, number>();
  const supply = new Map<string, bigint>();
  const protocols = new Map<string, { transactions: number; senders: Set<string> }>();
  const parties = new Map<string, number>();
  const hashes: string[] = [];

  const balancesOf = (token: string) => {
    let map = balances.get(token);
    if (!map) {
      map = new Map();
      balances.set(token, map);
    }
    return map;
  };

  return {
    balance: (token, holder) => balancesOf(token).get(holder) ?? 0n,
    move(token, from, to, amount) {
      const map = balancesOf(token);
      transfers.set(token, (transfers.get(token) ?? 0) + 1);
      if (from === ZERO) supply.set(token, (supply.get(token) ?? 0n) + amount);
      else map.set(from, (map.get(from) ?? 0n) - amount);
      if (to !== ZERO) map.set(to, (map.get(to) ?? 0n) + amount);
      if ((map.get(from) ?? 0n) < 0n) throw new Error(`generator bug: ${from} overdrew ${token}`);
    },
    addTransaction(tx) {
      hashes.push(tx.hash);
      let p = protocols.get(tx.protocol);
      if (!p) {
        p = { transactions: 0, senders: new Set() };
        protocols.set(tx.protocol, p);
      }
      p.transactions++;
      p.senders.add(tx.from);
      const set = new Set<string>([tx.from]);
      if (tx.to) set.add(tx.to);
      for (const t of tx.transfers) set.add(t.from).add(t.to);
      set.delete(ZERO);
      for (const a of set) parties.set(a, (parties.get(a) ?? 0) + 1);
    },
    transactions: () => hashes.length,
    protocols: () =>
      new Map([...protocols].map(([id, p]) => [id, { transactions: p.transactions, users: p.senders.size }])),
    tokens: () =>
      new Map(
        [...transfers.keys()].map((token) => {
          let holders = 0;
          for (const b of balancesOf(token).values()) if (b > 0n) holders++;
          return [token, { transfers: transfers.get(token) ?? 0, holders, supply: supply.get(token) ?? 0n }];
        }),
      ),
    addresses: () => parties.size,
    busiest(count, among) {
      return [...parties]
        .filter(([a]) => !among || among.has(a))
        .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
        .slice(0, count)
        .map(([address, transactions]) => ({ address, transactions }));
    },
    topHolders(token, limit, offset) {
      return [...balancesOf(token)]
        .filter(([, b]) => b > 0n)
        .sort((x, y) => (x[1] === y[1] ? (x[0] < y[0] ? -1 : 1) : x[1] > y[1] ? -1 : 1))
        .slice(offset, offset + limit)
        .map(([holder, balance]) => ({ holder, balance }));
    },
    hashes: () => hashes,
  };
}
