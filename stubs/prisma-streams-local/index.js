// Verity replaces @prisma/streams-local with this file (package.json:
// "overrides"; README, "What `npm install` runs"). The real package comes in
// through prisma → @prisma/dev, which imports it dynamically and only for
// `prisma dev` (a local Prisma Postgres server), a command Verity does not
// use. It requires Node >= 22: it opens node:sqlite, which Node 20 lacks, so
// here it could never run, and installing it only made every `npm install`
// print an EBADENGINE warning. (Prisma 7.10's `prisma dev` fetches a copy of
// its own at run time anyway, and on Node 20 fails there with "No such
// built-in module: node:sqlite".) `prisma generate` never loads this.
throw new Error(
  "@prisma/streams-local is not installed in Verity: it needs Node >= 22 and only `prisma dev` uses it. " +
    "Verity runs on PGlite (npm start) or a PostgreSQL server (DATABASE_URL).",
);
