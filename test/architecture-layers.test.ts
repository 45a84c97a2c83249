import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * The layering is written down twice: as LAYERS in .dependency-cruiser.cjs, which `npm test` enforces, and as the
 * Mermaid diagram in docs/architecture.md, which people read. They must say the same thing.
 */

function layersOfRules(): string[] {
  const text = readFileSync(new URL("../.dependency-cruiser.cjs", import.meta.url), "utf8");
  const list = /const LAYERS = \[([\s\S]*?)\];/.exec(text)?.[1] ?? "";
  return [...list.matchAll(/^\s*"([^"]+)",/gm)].map((match) => match[1]!);
}

/** The diagram's solid chain, lowest first, as folder names (`index.ts` for the entry). */
function layersOfDiagram(): string[] {
  const doc = readFileSync(new URL("../docs/architecture.md", import.meta.url), "utf8");
  const diagram = /```mermaid\n([\s\S]*?)```/.exec(doc)?.[1] ?? "";
  const labels = new Map<string, string>();
  for (const match of diagram.matchAll(/^\s*(\w+)\["([^"\s/]+)/gm)) labels.set(match[1]!, match[2]!);
  const chain: string[] = [];
  for (const line of diagram.split("\n")) {
    if (!line.includes("-->")) continue;
    for (const id of line.split("-->").map((part) => part.trim())) {
      if (chain[chain.length - 1] !== id) chain.push(id);
    }
  }
  return chain.map((id) => labels.get(id) ?? id).reverse();
}

describe("the layering", () => {
  it("docs/architecture.md's diagram lists the folders in the order the dependency rules enforce", () => {
    const rules = layersOfRules();
    expect(rules.length).toBeGreaterThan(20);
    expect(layersOfDiagram()).toEqual([...rules, "index.ts"]);
  });
});
