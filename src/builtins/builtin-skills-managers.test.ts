import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PluginConfigError } from "../errors/error-classes.js";
import { getPlugin } from "../plugins/plugin-registry.js";
import { LocalSkillsManager } from "../skills/local-skills-manager.js";
import { registerSkillsBuiltins } from "./builtin-skills-managers.js";

registerSkillsBuiltins();
registerSkillsBuiltins();

let root: string | undefined;

afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

function create(config: Record<string, unknown>, baseDir: string) {
  const definition = getPlugin("skills", "local");
  if (!definition) throw new Error("skills local is not registered");
  return definition.create(config, { baseDir, load: async () => undefined as never });
}

describe("registerSkillsBuiltins", () => {
  it("registers local, resolving search paths against the config's directory", async () => {
    root = await realpath(await mkdtemp(path.join(tmpdir(), "keel-skills-builtin-")));
    await mkdir(path.join(root, "custom", "one"), { recursive: true });
    await writeFile(path.join(root, "custom", "one", "SKILL.md"), "---\nname: one\n---\n");
    await mkdir(path.join(root, "custom", "two"), { recursive: true });
    await writeFile(path.join(root, "custom", "two", "SKILL.md"), "---\nname: two\n---\n");
    const manager = (await create(
      { search_paths: ["custom"], enabled: ["two"] },
      root,
    )) as LocalSkillsManager;
    expect(manager).toBeInstanceOf(LocalSkillsManager);
    expect(manager.searchPaths).toEqual([path.join(root, "custom")]);
    expect(Object.keys(await manager.prepareSession("s1"))).toEqual(["two"]);
  });

  it("defaults search_paths to skills", async () => {
    const manager = (await create({}, "/srv/app")) as LocalSkillsManager;
    expect(manager.searchPaths).toEqual([path.resolve("/srv/app", "skills")]);
    expect(manager.enabled).toEqual([]);
  });

  it("rejects an invalid config", async () => {
    expect(() => create({ search_paths: "skills" }, "/")).toThrow(PluginConfigError);
  });
});
