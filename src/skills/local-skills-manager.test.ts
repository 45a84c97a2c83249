import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { ConfigError, PluginLoadError } from "../errors/error-classes.js";
import { getLogger, type Logger } from "../logging/logger.js";
import { LocalSkillsManager, MAX_SKILL_REFERENCE_BYTES } from "./local-skills-manager.js";

let root: string;
let warn: MockInstance<Logger["warn"]>;

async function write(relative: string, content: string): Promise<void> {
  const file = path.join(root, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

function warnings(): string[] {
  return warn.mock.calls.map((call) => String(call[0]));
}

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), "keel-skills-")));
  warn = vi.spyOn(getLogger(), "warn").mockImplementation(() => {});
});

afterEach(async () => {
  vi.restoreAllMocks();
  await rm(root, { recursive: true, force: true });
});

async function writeStandardSkills(): Promise<void> {
  await write(
    "skills/alpha/SKILL.md",
    "---\nname: alpha\ndescription: Does alpha things\nallowed-tools:\n  - read_file\n  - grep_files\nversion: 2\n---\n# Alpha\n\nUse it well.\n",
  );
  await write(
    "skills/beta-dir/SKILL.md",
    "---\nname: beta\nallowed-tools: read_file, shell_exec\n---\nBeta body\n",
  );
  await write("skills/no-skill/README.md", "not a skill");
  await write("skills/nameless/SKILL.md", "---\ndescription: forgot the name\n---\n");
  await write("skills/loose-file.md", "ignored");
}

describe("LocalSkillsManager discovery", () => {
  it("summarises every skill with a named SKILL.md and warns about one without a name", async () => {
    await writeStandardSkills();
    const manager = new LocalSkillsManager({ baseDir: root });
    expect(await manager.prepareSession("s1")).toEqual({
      alpha: {
        name: "alpha",
        description: "Does alpha things",
        allowedTools: ["read_file", "grep_files"],
        path: path.join(root, "skills", "alpha"),
        metadata: { version: 2 },
      },
      beta: {
        name: "beta",
        description: "",
        allowedTools: ["read_file", "shell_exec"],
        path: path.join(root, "skills", "beta-dir"),
        metadata: {},
      },
    });
    expect(warnings()).toEqual([
      `skills: ${path.join(root, "skills", "nameless", "SKILL.md")} has no "name" in its front matter; skipped`,
    ]);
  });

  it("skips a skill with invalid front matter with a warning", async () => {
    await write("skills/bad/SKILL.md", "---\nname: [oops\n---\n");
    expect(await new LocalSkillsManager({ baseDir: root }).prepareSession("s1")).toEqual({});
    expect(warnings()).toHaveLength(1);
    expect(warnings()).toHaveLength(1);
    // One line naming the file; the YAML library's own wording is not pinned here.
    expect(warnings()[0]).toMatch(
      /^skills: .*\/skills\/bad\/SKILL\.md has invalid front matter \([^\n]+\); skipped$/,
    );
  });

  it("filters by enabled and warns about enabled names it did not find", async () => {
    await writeStandardSkills();
    const manager = new LocalSkillsManager({ baseDir: root, enabled: ["beta", "alpah"] });
    expect(Object.keys(await manager.prepareSession("s1"))).toEqual(["beta"]);
    expect(warnings()).toContain('skills: enabled skill "alpah" was not found (did you mean "alpha"?)');
  });

  it("treats an empty enabled list as every skill", async () => {
    await writeStandardSkills();
    const manager = new LocalSkillsManager({ baseDir: root, enabled: [] });
    expect(Object.keys(await manager.prepareSession("s1"))).toEqual(["alpha", "beta"]);
  });

  it("reads several search paths, warns of a missing one, and lets the first of two same-named skills win", async () => {
    await write("one/dup/SKILL.md", "---\nname: dup\ndescription: first\n---\n");
    await write("two/dup/SKILL.md", "---\nname: dup\ndescription: second\n---\n");
    await write("two/other/SKILL.md", "---\nname: other\n---\n");
    const manager = new LocalSkillsManager({
      baseDir: root,
      searchPaths: ["missing", "one", path.join(root, "two")],
    });
    const summaries = await manager.prepareSession("s1");
    expect(Object.keys(summaries)).toEqual(["dup", "other"]);
    expect(summaries.dup?.description).toBe("first");
    expect(warnings()).toEqual([
      `skills: search path ${path.join(root, "missing")} cannot be read (ENOENT); its skills are skipped`,
      `skills: "dup" at ${path.join(root, "two", "dup")} is skipped; a skill of that name was found first at ${path.join(root, "one", "dup")}`,
    ]);
    // The warning carries its cause, not only a sentence.
    expect(warn.mock.calls[0]?.[1]?.cause).toMatchObject({ code: "ENOENT" });
  });

  it("stays quiet when the default skills directory does not exist", async () => {
    const manager = new LocalSkillsManager({ baseDir: root });
    expect(await manager.prepareSession("s1")).toEqual({});
    expect(warnings()).toEqual([]);
  });

  it("scans once, caches per session, and sees new skills only after rescan", async () => {
    await writeStandardSkills();
    const manager = new LocalSkillsManager({ baseDir: root });
    const first = await manager.prepareSession("s1");
    expect(await manager.prepareSession("s1")).toBe(first);
    await write("skills/gamma/SKILL.md", "---\nname: gamma\n---\n");
    expect(Object.keys(await manager.prepareSession("s2"))).toEqual(["alpha", "beta"]);
    expect(Object.keys(await manager.rescan())).toEqual(["alpha", "beta", "gamma"]);
    expect(Object.keys(await manager.prepareSession("s1"))).toEqual(["alpha", "beta", "gamma"]);
  });

  it("gives each session its own summary objects", async () => {
    await writeStandardSkills();
    const manager = new LocalSkillsManager({ baseDir: root });
    const one = await manager.prepareSession("s1");
    one.alpha?.allowedTools.push("write_file");
    expect((await manager.prepareSession("s2")).alpha?.allowedTools).toEqual(["read_file", "grep_files"]);
  });

  it("forgets the least recently used session beyond maxCachedSessions", async () => {
    await writeStandardSkills();
    const manager = new LocalSkillsManager({ baseDir: root, maxCachedSessions: 2 });
    const s1 = await manager.prepareSession("s1");
    await manager.prepareSession("s2");
    await manager.prepareSession("s1");
    await manager.prepareSession("s3");
    expect(await manager.prepareSession("s1")).toBe(s1);
    const s2Again = await manager.prepareSession("s2");
    expect(s2Again).toEqual(s1);
    expect(await manager.prepareSession("s3")).not.toBe(s2Again);
  });

  it("refuses a skill directory that is a symlink out of its search path", async () => {
    await write("outside/evil/SKILL.md", "---\nname: evil\n---\n");
    await mkdir(path.join(root, "skills"), { recursive: true });
    await symlink(path.join(root, "outside", "evil"), path.join(root, "skills", "evil"));
    expect(await new LocalSkillsManager({ baseDir: root }).prepareSession("s1")).toEqual({});
    expect(warnings()).toEqual([
      `skills: ${path.join(root, "skills", "evil")} resolves outside its search path ${path.join(root, "skills")}; skipped`,
    ]);
  });
});

describe("LocalSkillsManager.loadReferences", () => {
  it("returns the SKILL.md body and every reference file, sorted, skipping large ones and escapes", async () => {
    await writeStandardSkills();
    await write("skills/alpha/references/guide.md", "guide");
    await write("skills/alpha/references/api/b.txt", "b");
    await write("skills/alpha/references/api/a.txt", "a");
    await write("skills/alpha/references/huge.bin", "x".repeat(MAX_SKILL_REFERENCE_BYTES + 1));
    await write("skills/alpha/references/limit.txt", "y".repeat(MAX_SKILL_REFERENCE_BYTES));
    await write("secret.txt", "secret");
    await symlink(path.join(root, "secret.txt"), path.join(root, "skills/alpha/references/leak.txt"));
    await symlink(
      path.join(root, "skills/alpha/references"),
      path.join(root, "skills/alpha/references/loop"),
    );
    const references = await new LocalSkillsManager({ baseDir: root }).loadReferences("s1", "alpha");
    expect(references.map((reference) => reference.path)).toEqual([
      "SKILL.md",
      "references/api/a.txt",
      "references/api/b.txt",
      "references/guide.md",
      "references/limit.txt",
    ]);
    expect(references[0]).toEqual({ path: "SKILL.md", content: "# Alpha\n\nUse it well.\n" });
    expect(references[1]).toEqual({ path: "references/api/a.txt", content: "a" });
    expect(references[4]?.content).toHaveLength(MAX_SKILL_REFERENCE_BYTES);
    expect(warnings()).toContain(
      `skills: reference ${path.join(root, "skills/alpha/references/leak.txt")} resolves outside the skill directory; skipped`,
    );
  });

  it("returns only SKILL.md for a skill without references", async () => {
    await writeStandardSkills();
    expect(await new LocalSkillsManager({ baseDir: root }).loadReferences("s1", "beta")).toEqual([
      { path: "SKILL.md", content: "Beta body\n" },
    ]);
  });

  it("rejects an unknown skill with a near-match hint", async () => {
    await writeStandardSkills();
    const manager = new LocalSkillsManager({ baseDir: root });
    const error = await manager.loadReferences("s1", "alpah").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe('unknown skill "alpah"');
    expect((error as ConfigError).hint).toBe('Did you mean "alpha"? Known skills: alpha, beta');
    const far = await manager.loadReferences("s1", "zzzzzz").catch((caught: unknown) => caught);
    expect((far as ConfigError).hint).toBe("Known skills: alpha, beta");
  });

  it("says where it looked when there are no skills at all", async () => {
    const error = await new LocalSkillsManager({ baseDir: root })
      .loadReferences("s1", "x")
      .catch((caught: unknown) => caught);
    expect((error as ConfigError).hint).toBe(
      `No skills were found under ${path.join(root, "skills")}; a skill is a directory holding a SKILL.md`,
    );
  });
});

describe("LocalSkillsManager.runSkill", () => {
  it("imports the entry module and calls run(payload, {sessionId, skillName, skillDir})", async () => {
    await write("skills/runner/SKILL.md", "---\nname: runner\nentry: lib/run.mjs\n---\n");
    await write(
      "skills/runner/lib/run.mjs",
      "export async function run(payload, context) { return { doubled: payload.n * 2, context }; }\n",
    );
    const result = await new LocalSkillsManager({ baseDir: root }).runSkill("s1", "runner", { n: 21 });
    expect(result).toEqual({
      doubled: 42,
      context: { sessionId: "s1", skillName: "runner", skillDir: path.join(root, "skills", "runner") },
    });
  });

  it("wraps a result that is not an object and maps nothing to an empty object", async () => {
    await write("skills/plain/SKILL.md", "---\nname: plain\nentry: run.mjs\n---\n");
    await write("skills/plain/run.mjs", "export function run(payload) { return payload.value; }\n");
    const manager = new LocalSkillsManager({ baseDir: root });
    expect(await manager.runSkill("s1", "plain", { value: "text" })).toEqual({ result: "text" });
    expect(await manager.runSkill("s1", "plain", { value: [1] })).toEqual({ result: [1] });
    expect(await manager.runSkill("s1", "plain", {})).toEqual({});
  });

  it("asks for an entry when the skill has none", async () => {
    await writeStandardSkills();
    const error = await new LocalSkillsManager({ baseDir: root })
      .runSkill("s1", "beta", {})
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe('skill "beta" has no entry module to run');
    expect((error as ConfigError).hint).toContain('Add "entry: <module path>" to the front matter of');
  });

  it("refuses an entry outside the skill directory, by .. or by symlink", async () => {
    await write("evil.mjs", "export function run() { return { pwned: true }; }\n");
    await write("skills/dots/SKILL.md", "---\nname: dots\nentry: ../../evil.mjs\n---\n");
    await write("skills/linked/SKILL.md", "---\nname: linked\nentry: run.mjs\n---\n");
    await symlink(path.join(root, "evil.mjs"), path.join(root, "skills/linked/run.mjs"));
    const manager = new LocalSkillsManager({ baseDir: root });
    for (const name of ["dots", "linked"]) {
      const error = await manager.runSkill("s1", name, {}).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toMatch(/lies outside the skill directory$/);
    }
  });

  it("reports a missing module, a module without run, and a module that fails to import", async () => {
    await write("skills/missing/SKILL.md", "---\nname: missing\nentry: nope.mjs\n---\n");
    await write("skills/norun/SKILL.md", "---\nname: norun\nentry: mod.mjs\n---\n");
    await write("skills/norun/mod.mjs", "export const other = 1;\n");
    await write("skills/broken/SKILL.md", "---\nname: broken\nentry: mod.mjs\n---\n");
    await write("skills/broken/mod.mjs", "export function run( {\n");
    const manager = new LocalSkillsManager({ baseDir: root });
    const missing = await manager.runSkill("s1", "missing", {}).catch((caught: unknown) => caught);
    expect((missing as ConfigError).message).toBe('skill "missing": entry module "nope.mjs" does not exist');
    const norun = await manager.runSkill("s1", "norun", {}).catch((caught: unknown) => caught);
    expect(norun).toBeInstanceOf(ConfigError);
    expect((norun as ConfigError).message).toBe(
      'skill "norun": its entry module mod.mjs exports no run function',
    );
    const broken = await manager.runSkill("s1", "broken", {}).catch((caught: unknown) => caught);
    expect(broken).toBeInstanceOf(PluginLoadError);
    expect((broken as PluginLoadError).message).toBe(
      'skill "broken": its entry module mod.mjs failed to import',
    );
  });
});
