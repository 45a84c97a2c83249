import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * A source file is one a reader can hold: split along its responsibilities before it passes this many lines.
 * Tests are exempt (a suite of one feature may run long), as is generated text.
 */
const MAX_LINES = 600;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const src = path.join(root, "src");

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (/\.tsx?$/.test(entry.name) && !/\.test(-d)?\.ts$/.test(entry.name)) yield full;
  }
}

describe("source files", () => {
  it(`stay within ${MAX_LINES} lines`, () => {
    const long: string[] = [];
    // The web console's sources too.
    for (const file of [...sourceFiles(src), ...sourceFiles(path.join(root, "console"))]) {
      const lines = readFileSync(file, "utf8").split("\n").length - 1;
      if (lines > MAX_LINES) long.push(`${path.relative(root, file)}: ${lines} lines`);
    }
    expect(long).toEqual([]);
  });
});
