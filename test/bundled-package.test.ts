import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { useBuiltCli } from "./support/cli-process.js";
import { repoRoot } from "./support/compile-for-children.js";

/**
 * The package's JavaScript is one rolldown build of every public entry and the bin (scripts/bundle.mjs). What
 * users rely on: each source module is in the output once, so a class or registry is one object whichever
 * entries a program imports; dependencies are imported, never copied in; dist/ has the entries and chunks only.
 */

useBuiltCli();

const dist = join(repoRoot, "dist");
const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  exports: Record<string, string | { default: string }>;
  bin: Record<string, string>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

/** The bundle's files, relative to dist/ (the console is vite's, not this build's). */
function bundleFiles(): string[] {
  return readdirSync(dist, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".js"))
    .map((entry) => relative(dist, join(entry.parentPath, entry.name)))
    .filter((file) => !file.startsWith("console/"));
}

/** The package a bare specifier names: `hono/body-limit` → `hono`, `@hono/node-server` → itself. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

describe("the bundled package", () => {
  it("has the entries package.json names and shared chunks, and no per-module files", () => {
    const entries = [
      ...Object.values(manifest.exports).flatMap((target) =>
        typeof target === "string" ? [] : [target.default],
      ),
      ...Object.values(manifest.bin),
    ].map((target) => target.replace(/^\.\/dist\//, ""));
    const files = bundleFiles();
    expect(files).toEqual(expect.arrayContaining(entries));
    expect(files.filter((file) => !entries.includes(file) && !file.startsWith("chunks/"))).toEqual([]);
  });

  it("holds each source module once, so entries share their classes and registries", () => {
    const seen = new Map<string, string[]>();
    for (const file of bundleFiles()) {
      // Rolldown marks where each module's code starts with its source path.
      for (const [, source] of readFileSync(join(dist, file), "utf8").matchAll(/^\/\/ (src\/\S+\.ts)$/gm))
        seen.set(source!, [...(seen.get(source!) ?? []), file]);
    }
    expect(seen.size).toBeGreaterThan(150);
    expect([...seen].filter(([, files]) => files.length > 1)).toEqual([]);
  });

  it("imports its dependencies and Node's modules rather than carrying copies", () => {
    const allowed = new Set([
      ...Object.keys(manifest.dependencies),
      ...Object.keys(manifest.peerDependencies),
    ]);
    const builtins = new Set(builtinModules);
    const imported = new Set<string>();
    for (const file of bundleFiles()) {
      const code = readFileSync(join(dist, file), "utf8");
      for (const [, specifier] of code.matchAll(/^(?:import|export)\b[^;]*?["']([^"'./][^"']*)["'];?$/gm))
        imported.add(specifier!);
    }
    expect(imported).toContain("zod");
    for (const specifier of imported) {
      const known = specifier.startsWith("node:")
        ? builtins.has(specifier.slice(5))
        : allowed.has(packageOf(specifier));
      expect(known, specifier).toBe(true);
    }
    // zod's core defines `$ZodType`: a copy of zod in a chunk would carry it.
    for (const file of bundleFiles())
      expect(readFileSync(join(dist, file), "utf8"), file).not.toContain("$ZodType");
  });
});
