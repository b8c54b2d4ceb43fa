// Types of nodeFlags.js for the TypeScript that imports it; see there.
export declare const NODE_FLAGS: readonly string[];
export declare const START_ENV: readonly string[];
