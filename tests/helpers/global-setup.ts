import type { TestProject } from "vitest/node";
import { buildPgliteTemplate } from "./pglite-template";

declare module "vitest" {
  export interface ProvidedContext {
    /** Tarball of a migrated PGlite data folder; see tests/helpers/pglite.ts. */
    pgliteTemplatePath: string;
  }
}

/** Runs once per `vitest run`, before any test file. */
export default async function setup(project: TestProject): Promise<void> {
  project.provide("pgliteTemplatePath", await buildPgliteTemplate());
}
