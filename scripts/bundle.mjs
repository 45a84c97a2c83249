/**
 * `npm run build`'s first step: the package's JavaScript. Every public entry (package.json `exports`) and the
 * `keel` bin are bundled from the sources in ONE rolldown build, so the modules they share sit in shared chunks
 * and each class, registry and error type exists once however many entries a program imports. A dynamic
 * `import()` in the sources (a provider, a store, a CLI command) becomes a chunk of its own, loaded on first use.
 *
 * Why bundle: Node's ESM loader pays per module (resolve, read, compile, link) about as much as the code in it
 * costs to run; a few dozen chunks instead of ~210 files make `import("keel")` markedly cheaper
 * (docs/decisions/0030-start-up-cost.md). Dependencies stay external: users dedupe them with their own, and a zod
 * schema a user passes must be the zod Keel checks with. The declarations (`.d.ts`) come from `tsc` afterwards,
 * one per source module as before; dist/ holds no per-module `.js`.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { build } from "rolldown";

const root = new URL("../", import.meta.url);
const manifest = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));

/** `./dist/testing/index.js` → `testing/index`: the entry keeps the path package.json names, so it holds as is. */
function entryName(target) {
  const match = /^\.\/dist\/(.+)\.js$/.exec(target);
  if (!match) throw new Error(`package.json points at ${target}, which the bundle does not build`);
  return match[1];
}

const targets = [
  ...Object.values(manifest.exports).flatMap((entry) => (typeof entry === "string" ? [] : [entry.default])),
  ...Object.values(manifest.bin),
];
const input = Object.fromEntries(targets.map((target) => [entryName(target), `src/${entryName(target)}.ts`]));

const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);

const dist = new URL("dist/", root).pathname;

const { output } = await build({
  cwd: new URL(".", root).pathname,
  input,
  platform: "node",
  // A bare specifier is a dependency or a Node built-in: imported at run time from the user's node_modules.
  external: (id) => builtins.has(id) || /^[^./\0]/.test(id),
  transform: { target: "es2023" },
  logLevel: "warn",
  output: {
    dir: dist,
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "chunks/[name]-[hash].js",
    // Errors take their name from their class (`new.target.name`): the bundle must not rename classes.
    keepNames: true,
    // The docs are in the declarations; what Node parses at start-up needs only the code.
    comments: { legal: true, annotation: true, jsdoc: false },
    sourcemap: false,
  },
});

// Remove the JavaScript this build did not write: chunks of earlier builds, per-module files of the tsc builds
// before bundling. Not by emptying dist/ first: tests rebuild the code while others run `dist/cli/main.js`,
// and a rebuild of unchanged sources rewrites the same names. Declarations and the console stay.
const written = new Set(output.map((file) => path.join(dist, file.fileName)));
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  const file = path.join(entry.parentPath, entry.name);
  if (
    entry.isFile() &&
    file.endsWith(".js") &&
    !file.startsWith(path.join(dist, "console")) &&
    !written.has(file)
  )
    rmSync(file);
}
