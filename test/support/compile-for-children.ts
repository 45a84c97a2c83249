import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { transformSync } from "rolldown/experimental";

/** The repository's root, for tests that spawn processes. */
export const repoRoot = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");

/**
 * Compile Keel's sources into `<root>/build` for child processes to run. A private outDir keeps cross-process
 * tests independent of the shared dist/ and of a build running elsewhere. Returns the output directory;
 * `src/x/y.ts` becomes `<outDir>/x/y.js`.
 *
 * Each file is transpiled on its own with Oxc, as Vitest transforms the same sources for the tests themselves:
 * the tsconfig sets isolatedModules and verbatimModuleSyntax, so no file needs another to be compiled. Type
 * errors are the typecheck step's to find; running tsc here cost each of these test files ten seconds or more.
 */
export function compileForChildren(root: string): string {
  const outDir = join(root, "build");
  const srcDir = join(repoRoot, "src");
  for (const source of sourceFiles(srcDir)) {
    const result = transformSync(source, readFileSync(source, "utf8"), {
      lang: "ts",
      sourceType: "module",
      target: "es2023",
      // What verbatimModuleSyntax makes tsc do: an import goes only when it says `type`.
      typescript: { onlyRemoveTypeImports: true },
    });
    if (result.errors.length > 0)
      throw new Error(`Could not compile ${source}:\n${result.errors.map(String).join("\n")}`);
    const target = join(outDir, relative(srcDir, source).replace(/\.ts$/, ".js"));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, result.code);
  }
  // Compiled code imports packages (zod, libsql) at run time from its own location; let that reach the repo's.
  symlinkSync(join(repoRoot, "node_modules"), join(root, "node_modules"), "dir");
  return outDir;
}

/** The package's TypeScript sources under `dir`, without tests and type tests. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !/\.test(-d)?\.ts$/.test(entry.name) ? [path] : [];
  });
}
