import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Tool, ToolContext, ToolResult } from "../../contracts/tool.js";
import { loadedSkillNames } from "../../permissions/run-policy.js";
import { Runtime } from "../../runtime/runtime.js";
import { LocalSkillsManager } from "../../skills/local-skills-manager.js";
import { scriptedModel } from "../../testing/index.js";
import { createSkillsToolset, SKILL_NOT_FOUND_CODE } from "./skills-toolset.js";

/** The skills toolset, called without a model, and in a run. */

const base = mkdtempSync(path.join(tmpdir(), "keel-skills-tools-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A skill folder: SKILL.md from `frontMatter` (after its name) and `body`, plus files under references/. */
function skill(
  name: string,
  {
    frontMatter,
    body,
    references = {},
  }: { frontMatter: string; body: string; references?: Record<string, string> },
): void {
  const dir = path.join(base, "skills", name);
  mkdirSync(path.join(dir, "references"), { recursive: true });
  writeFileSync(path.join(dir, "SKILL.md"), `---\nname: ${name}\n${frontMatter}---\n${body}`);
  for (const [file, content] of Object.entries(references))
    writeFileSync(path.join(dir, "references", file), content);
}

skill("pdf-reader", {
  frontMatter: "description: Read PDF files\nallowed-tools: read_file\n",
  body: "# PDF\nUse read_file.\n",
  references: { "formats.md": "PDF 1.7" },
});
skill("summarize", { frontMatter: "description: Summarise text\n", body: "Summarise briefly.\n" });

function tools() {
  const manager = new LocalSkillsManager({ searchPaths: [path.join(base, "skills")] });
  const toolset = createSkillsToolset({ manager });
  const byName = Object.fromEntries(toolset.tools().map((tool) => [tool.name, tool])) as Record<string, Tool>;
  const state: Record<string, unknown> = {};
  const ctx = { sessionId: "s1", runId: "r1", session: { id: "s1", state }, state } as unknown as ToolContext;
  const call = async <T>(name: string, params: Record<string, unknown>) =>
    (await byName[name]!.invoke(params, ctx)) as ToolResult<T>;
  return { toolset, call, state };
}

describe("list_skills", () => {
  it("lists names and descriptions, sorted", async () => {
    const { call } = tools();
    const result = await call<{ skills: { name: string; description: string }[] }>("list_skills", {});
    expect(result.ok).toBe(true);
    expect(result.data!.skills).toEqual([
      { name: "pdf-reader", description: "Read PDF files", allowedTools: ["read_file"] },
      { name: "summarize", description: "Summarise text", allowedTools: [] },
    ]);
    expect(result.summary).toBe("2 skill(s): pdf-reader, summarize");
  });
});

describe("load_skill", () => {
  it("returns the SKILL.md body and references, and marks the skill loaded in the session", async () => {
    const { call, state } = tools();
    const result = await call<Record<string, unknown>>("load_skill", { name: "pdf-reader" });
    expect(result.data).toMatchObject({
      name: "pdf-reader",
      instructions: "# PDF\nUse read_file.\n",
      references: [{ path: "references/formats.md", content: "PDF 1.7" }],
      allowedTools: ["read_file"],
      alreadyLoaded: false,
    });
    expect(loadedSkillNames(state)).toEqual(["pdf-reader"]);
    const again = await call<Record<string, unknown>>("load_skill", { name: "pdf-reader" });
    expect(again.data!.alreadyLoaded).toBe(true);
    expect(loadedSkillNames(state)).toEqual(["pdf-reader"]);
  });

  it("takes skill_id, the argument the model's schema shows; name still works as an alias", async () => {
    const { toolset, call } = tools();
    const loadSkill = toolset.tools().find((tool) => tool.name === "load_skill")!;
    const schema = loadSkill.schema() as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(schema.properties)).toEqual(["skill_id"]);
    expect(schema.required).toEqual(["skill_id"]);
    expect(await loadSkill.validateParams!({ skill_id: "summarize" })).toEqual({
      ok: true,
      value: { skill_id: "summarize" },
    });
    expect(await loadSkill.validateParams!({ name: "summarize" })).toEqual({
      ok: true,
      value: { skill_id: "summarize" },
    });
    expect((await loadSkill.validateParams!({})).ok).toBe(false);
    const result = await call<Record<string, unknown>>("load_skill", { skill_id: "summarize" });
    expect(result.data).toMatchObject({ name: "summarize", instructions: "Summarise briefly.\n" });
  });

  it("an unknown name is a tool error with a near match; nothing is marked", async () => {
    const { call, state } = tools();
    await expect(call("load_skill", { name: "pdf-readr" })).rejects.toMatchObject({
      code: SKILL_NOT_FOUND_CODE,
      message: expect.stringContaining('Did you mean "pdf-reader"?'),
    });
    expect(loadedSkillNames(state)).toEqual([]);
  });
});

describe("in a run", () => {
  it("load_skill makes the skill's allowed-tools part of the session's policy from the next run", async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: "l", name: "list_skills", arguments: {} }] },
      { toolCalls: [{ id: "k", name: "load_skill", arguments: { skill_id: "pdf-reader" } }] },
      { text: "done" },
    ]);
    const runtime = await Runtime.fromDict({
      skills: { type: "local", config: { search_paths: [path.join(base, "skills")] } },
      agents: [{ id: "a", name: "A", llm: model, tools: [{ id: "sk", type: "skills" }] }],
    });
    try {
      const before = await runtime.getEffectivePolicy("a", { sessionId: "s" });
      expect(before.skills).toEqual([]);
      const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "go" });
      expect(result.stopReason).toBe("completed");
      const listed = JSON.parse(model.requests[1]!.messages.at(-1)!.content as string);
      expect(listed.data.skills.map((s: { name: string }) => s.name)).toEqual(["pdf-reader", "summarize"]);
      const loaded = JSON.parse(model.requests[2]!.messages.at(-1)!.content as string);
      expect(loaded.data.instructions).toContain("Use read_file.");
      const after = await runtime.getEffectivePolicy("a", { sessionId: "s" });
      expect(after.skills).toEqual(["pdf-reader"]);
      expect(after.rules.some((rule) => rule.source === "skill" && rule.skill === "pdf-reader")).toBe(true);
    } finally {
      await runtime.close();
    }
  });
});
