import { signal } from "@preact/signals";
import { api, type TokenList } from "./api.ts";

/** What the configuration calls an address: a contract of a protocol or a tracked token. */
export type Label = { name: string; kind: "contract" | "token"; protocol: string };
export type TokenMeta = TokenList["tokens"][number];

/** Labels by lowercase address, and the tracked tokens; filled once at start from the API. */
export const labels = signal<Map<string, Label>>(new Map());
export const tokens = signal<Map<string, TokenMeta>>(new Map());
/** Protocol names by id. */
export const protocolNames = signal<Map<string, string>>(new Map());

/** Read the configured names (`GET /api/protocols`, `GET /api/tokens`); without them addresses show bare. */
export async function loadLabels(): Promise<void> {
  const [protocols, list] = await Promise.all([api.protocols(), api.tokens()]).catch(() => [null, null]);
  const map = new Map<string, Label>();
  for (const p of protocols?.protocols ?? []) {
    for (const c of p.contracts)
      map.set(c.address.toLowerCase(), { name: c.name, kind: "contract", protocol: p.id });
  }
  for (const t of list?.tokens ?? []) {
    map.set(t.address.toLowerCase(), { name: t.symbol, kind: "token", protocol: t.protocol });
  }
  labels.value = map;
  tokens.value = new Map((list?.tokens ?? []).map((t) => [t.address.toLowerCase(), t]));
  protocolNames.value = new Map((protocols?.protocols ?? []).map((p) => [p.id, p.name]));
}

export const labelOf = (address: string | null | undefined): Label | undefined =>
  address ? labels.value.get(address.toLowerCase()) : undefined;
