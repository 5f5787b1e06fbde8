import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import * as bg from "@prisma/schema-engine-wasm/schema_engine_bg";

/**
 * Prisma's schema engine compiled to WebAssembly. Its package entry imports a
 * .wasm file directly, which Node 20 refuses, so we instantiate the module
 * ourselves (see ../shared/STACK.md). Loaded once per process.
 */
let loaded: Promise<typeof bg> | undefined;

export function loadSchemaEngine(): Promise<typeof bg> {
  loaded ??= (async () => {
    const require = createRequire(import.meta.url);
    // The package exports no ./package.json; resolve a file it does export.
    const pkgDir = path.dirname(require.resolve("@prisma/schema-engine-wasm/schema_engine_bg"));
    const bytes = await readFile(path.join(pkgDir, "schema_engine_bg.wasm"));
    const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": bg as unknown as WebAssembly.ModuleImports });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return bg;
  })();
  return loaded;
}
