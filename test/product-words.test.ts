import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The product speaks English and never of the documents it was built from: no source file outside the tests,
 * and no page a user reads, holds CJK characters or names a seed document ("seed 002"). Tests may hold such
 * text as data (a near-match test compares non-Latin strings); decision records cite what they decide on.
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CJK = /[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]/u;
const SEED = /\bseed 0\d\d\b/i;

function* productFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* productFiles(full);
    else if (/\.(ts|tsx|css|html|mjs|js|json|md)$/.test(entry.name) && !/\.test(-d)?\.ts$/.test(entry.name))
      yield full;
  }
}

const READ_BY_USERS = [
  "README.md",
  "docs/architecture.md",
  "docs/events.md",
  ...readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md") && !["architecture.md", "events.md"].includes(name))
    .map((name) => `docs/${name}`),
];

describe("the product's words", () => {
  it("no source file outside the tests, and no user-facing page, holds CJK text or names a seed document", () => {
    const files = [
      ...productFiles(path.join(root, "src")),
      ...productFiles(path.join(root, "examples")),
      ...productFiles(path.join(root, "console")),
    ];
    for (const page of READ_BY_USERS) files.push(path.join(root, page));
    const found: string[] = [];
    for (const file of files) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, index) => {
          if (CJK.test(line) || SEED.test(line))
            found.push(`${path.relative(root, file)}:${index + 1}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });
});
