import type { Tool } from "../contracts/tool.js";
import { PluginLoadError } from "../errors/error-classes.js";

/**
 * A group of related tools one config entry contributes: `{"id": "fs", "type": "filesystem"}` gives
 * `read_file`, `write_file`, … Each tool keeps its own name; the entry's id only names the group.
 */
export interface Toolset {
  readonly kind: "toolset";
  readonly name: string;
  tools(): readonly Tool[];
}

export function isToolset(value: unknown): value is Toolset {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Partial<Toolset>).kind === "toolset" &&
    typeof (value as Partial<Toolset>).tools === "function"
  );
}

/**
 * The tools a loaded `tools` entry stands for, keyed by the name the model calls them by: a tool under its
 * config id, a toolset's tools under their own names.
 */
export function toolsOfEntry(loaded: unknown, id: string, label: string): [name: string, tool: Tool][] {
  if (isToolset(loaded)) return loaded.tools().map((tool) => [tool.name, tool]);
  if (typeof (loaded as Partial<Tool> | null)?.invoke !== "function") {
    throw new PluginLoadError(`${label}: the tool plugin is missing method(s) invoke`, {
      hint: "A tool plugin must implement invoke, or be a toolset ({ kind: 'toolset', tools() })",
    });
  }
  return [[id, loaded as Tool]];
}
