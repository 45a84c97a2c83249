import { describe, expect, it } from "vitest";
import { PluginLoadError } from "../errors/error-classes.js";
import { defineTool } from "./define-tool.js";
import { isToolset, type Toolset, toolsOfEntry } from "./toolset.js";

const one = defineTool({ name: "one", description: "", execute: () => 1 });
const two = defineTool({ name: "two", description: "", execute: () => 2 });
const toolset: Toolset = { kind: "toolset", name: "pair", tools: () => [one, two] };

describe("toolsets", () => {
  it("recognizes a toolset", () => {
    expect(isToolset(toolset)).toBe(true);
    expect(isToolset(one)).toBe(false);
    expect(isToolset({ kind: "toolset" })).toBe(false);
    expect(isToolset(null)).toBe(false);
  });

  it("keys a tool by its config id and a toolset's tools by their names", () => {
    expect(toolsOfEntry(one, "renamed", "label")).toEqual([["renamed", one]]);
    expect(toolsOfEntry(toolset, "pair", "label")).toEqual([
      ["one", one],
      ["two", two],
    ]);
  });

  it("refuses anything else the way the loader refuses a tool without invoke", () => {
    expect(() => toolsOfEntry({ name: "x" }, "x", "agents[a].tools[x]")).toThrow(PluginLoadError);
    expect(() => toolsOfEntry(undefined, "x", "agents[a].tools[x]")).toThrow(
      "agents[a].tools[x]: the tool plugin is missing method(s) invoke",
    );
  });
});
