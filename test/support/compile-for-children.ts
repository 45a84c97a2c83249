import { execFileSync } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root, for tests that spawn processes. */
export const repoRoot = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");

/**
 * Compile some source files (and what they import) into `<root>/build` for child processes to run. A private
 * outDir keeps cross-process tests independent of the shared dist/ and of unfinished files elsewhere in the tree.
 * Returns the output directory; `src/x/y.ts` becomes `<outDir>/x/y.js`.
 */
export function compileForChildren(root: string, files: readonly string[]): string {
  const outDir = join(root, "build");
  const tsconfig = join(root, "tsconfig.json");
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: join(repoRoot, "tsconfig.json"),
      compilerOptions: {
        rootDir: join(repoRoot, "src"),
        outDir,
        noEmit: false,
        declaration: false,
        declarationMap: false,
        sourceMap: false,
        // Resolved from the temp directory otherwise, where there is no node_modules.
        typeRoots: [join(repoRoot, "node_modules/@types")],
      },
      include: [],
      files: files.map((file) => join(repoRoot, file)),
    }),
  );
  // Compiled code imports packages (zod, libsql) at run time from its own location; let that reach the repo's.
  symlinkSync(join(repoRoot, "node_modules"), join(root, "node_modules"), "dir");
  const tsc = createRequire(join(repoRoot, "package.json")).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", tsconfig], { cwd: repoRoot, stdio: "pipe" });
  return outDir;
}
