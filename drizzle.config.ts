import { defineConfig } from "drizzle-kit";

// `npm run db:generate` writes a new migration into src/store/migrations from src/store/schema.ts.
// Landed migrations are never edited: change the schema and generate a new one.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/schema.ts",
  out: "./src/store/migrations",
});
