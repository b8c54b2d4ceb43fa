import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

/** Debian's Chromium (`apt-get install chromium`): the tests never download a browser. */
export const CHROMIUM = "/usr/bin/chromium";
export const hasChromium = existsSync(CHROMIUM);

/** Launch headless Chromium as the brief asks: no sandbox (root in CI), no GPU, no background traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** What a page did that a person would not want: console errors, uncaught exceptions, other origins. */
export type PageWatch = {
  page: Page;
  consoleErrors: string[];
  foreignRequests: string[];
};

/**
 * A new page in `context` that records console errors (with the URL they are about), uncaught errors and
 * every request to an origin other than `origin`. `allowConsole` lists errors a test expects (a refused
 * WebSocket, an endpoint this server does not have yet).
 */
export async function watchedPage(
  context: BrowserContext,
  origin: string,
  allowConsole: (text: string, url: string) => boolean = () => false,
): Promise<PageWatch> {
  const page = await context.newPage();
  const watch: PageWatch = { page, consoleErrors: [], foreignRequests: [] };
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    const url = message.location().url;
    if (!allowConsole(message.text(), url)) watch.consoleErrors.push(`${message.text()} (${url})`);
  });
  page.on("pageerror", (error) => watch.consoleErrors.push(`uncaught: ${error.message}`));
  page.on("request", (request) => {
    const url = request.url();
    if (url.startsWith("data:")) return;
    if (new URL(url).origin !== origin) watch.foreignRequests.push(url);
  });
  return watch;
}

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: { target: unknown }[] };

/**
 * Run axe-core in the page (evaluated through the DevTools protocol, so the page's CSP stays as served) and
 * return its serious and critical violations.
 */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run();
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })),
    }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}
