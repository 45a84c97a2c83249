import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Comments say why in their own words: none cites a requirement id of a document the repository does not hold
 * (decision records under docs/decisions/ may, and are not scanned).
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SCANNED = ["src", "test", "bench", "examples", "scripts", "console"];
const SKIPPED = new Set(["node_modules", "vendor", "dist"]);
const CODE = /\.(ts|tsx|mts|mjs|js|cjs)$/;
// The id families of the external requirements document: two or three capitals, a dash, a number.
const CITATION = new RegExp(
  `\\b(${["RT", "LC", "TL", "CX", "LM", "DR", "SB", "MCP", "ST", "HP", "UX", "OB", "SC"].join("|")})-\\d+`,
);

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (CODE.test(entry.name)) yield full;
  }
}

describe("source comments", () => {
  it("cite no requirement id of a document outside the repository", () => {
    const found: string[] = [];
    for (const folder of SCANNED) {
      for (const file of sourceFiles(path.join(root, folder))) {
        if (file === fileURLToPath(import.meta.url)) continue;
        readFileSync(file, "utf8")
          .split("\n")
          .forEach((line, index) => {
            if (CITATION.test(line)) found.push(`${path.relative(root, file)}:${index + 1}: ${line.trim()}`);
          });
      }
    }
    expect(found).toEqual([]);
  });
});
