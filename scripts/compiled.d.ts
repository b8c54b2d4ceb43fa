// Types of compiled.js for the TypeScript that imports it (bench/index.ts); see there for what each does.
export declare const ROOT: string;
export declare const DIST: string;
export declare const STAMP: string;
export declare const SOURCE_DIRS: readonly string[];
export declare function isTestFile(path: string): boolean;
export declare function sourceFiles(): string[];
export declare function sourceFingerprint(): string;
export declare function compiledModule(path: string): string | undefined;
