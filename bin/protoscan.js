#!/usr/bin/env node
// protoscan runs from its TypeScript sources (no build step): tsx registers the loader, then the CLI starts.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
