import { alchemy } from "./alchemy.ts";
import type { WebhookProvider } from "./provider.ts";
import { quicknode } from "./quicknode.ts";

/** Every provider protoscan receives webhooks from, by `:provider` path segment (SPEC §3.2). */
export const WEBHOOK_PROVIDERS: Readonly<Record<string, WebhookProvider>> = { alchemy, quicknode };

/** The provider named by a path segment or an inbox row, if protoscan knows it. */
export function webhookProvider(name: string): WebhookProvider | undefined {
  return Object.hasOwn(WEBHOOK_PROVIDERS, name) ? WEBHOOK_PROVIDERS[name] : undefined;
}
