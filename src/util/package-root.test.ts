import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { packageRoot } from "./package-root.js";

describe("packageRoot", () => {
  it("finds the checkout's root from src/util, two levels up, where Keel's package.json is", () => {
    const expected = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
    expect(packageRoot()).toBe(expected);
    const manifest = JSON.parse(readFileSync(path.join(packageRoot(), "package.json"), "utf8"));
    expect(manifest.name).toBe("keel");
  });
});
