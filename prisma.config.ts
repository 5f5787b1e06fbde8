import { defineConfig } from "prisma/config";

// The app never reads this file at run time (lib/db/client.ts builds the client with
// a driver adapter). It serves the stock Prisma CLI: `prisma generate` here,
// and `prisma migrate deploy` on machines that can download Prisma's engines.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  ...(process.env.DATABASE_URL ? { datasource: { url: process.env.DATABASE_URL } } : {}),
});
