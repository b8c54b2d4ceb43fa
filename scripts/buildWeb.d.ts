// Types of buildWeb.js for the TypeScript that imports it (tests, bench/web.ts).
export declare const WEB_OUT: string;
export declare function buildWeb(options?: { outDir?: string }): Promise<{ outDir: string; files: string[] }>;
