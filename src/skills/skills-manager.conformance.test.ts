import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  describeSkillsManagerConformance,
  type SkillFixture,
} from "../testing/skills-manager-conformance.js";
import { LocalSkillsManager } from "./local-skills-manager.js";

const roots = new Map<LocalSkillsManager, string>();

/** Each fixture as `<root>/skills/<name>/SKILL.md` with front matter, plus its reference files. */
async function writeSkills(skills: readonly SkillFixture[]): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), "keel-skills-conformance-"));
  for (const skill of skills) {
    const dir = path.join(root, "skills", skill.name);
    await mkdir(dir, { recursive: true });
    const tools = skill.allowedTools.length > 0 ? `allowed-tools: ${skill.allowedTools.join(", ")}\n` : "";
    await writeFile(
      path.join(dir, "SKILL.md"),
      `---\nname: ${skill.name}\ndescription: ${skill.description}\n${tools}---\n${skill.instructions}\n`,
    );
    for (const [relative, content] of Object.entries(skill.references)) {
      await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
      await writeFile(path.join(dir, relative), content);
    }
  }
  return root;
}

describeSkillsManagerConformance(
  "local",
  async (skills) => {
    const root = await writeSkills(skills);
    const manager = new LocalSkillsManager({ baseDir: root, searchPaths: ["skills"] });
    roots.set(manager, root);
    return manager;
  },
  {
    cleanup: async (manager) => {
      const root = roots.get(manager as LocalSkillsManager);
      roots.delete(manager as LocalSkillsManager);
      if (root !== undefined) await rm(root, { recursive: true, force: true });
    },
  },
);
