import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KeelError } from "../errors/keel-error.js";
import { InMemorySessionManager } from "../sessions/in-memory-session-manager.js";
import type { SessionManager } from "../sessions/session-manager.js";
import type { SkillsManager } from "../skills/skills-manager.js";

/** One skill the suite needs the manager to serve. */
export interface SkillFixture {
  name: string;
  description: string;
  allowedTools: string[];
  /** The skill's instructions (the body of a `SKILL.md`). */
  instructions: string;
  /** Reference files by path relative to the skill (`references/guide.md`) and their text. */
  references: Record<string, string>;
}

/** The skills the suite's manager must serve, for a factory that writes them wherever its manager reads. */
export const SKILL_FIXTURES: readonly SkillFixture[] = [
  {
    name: "pdf-reader",
    description: "Reads PDF files and answers questions about them",
    allowedTools: ["read_file", "grep_files"],
    instructions: "Open the PDF with read_file, then quote the page you answer from.",
    references: { "references/guide.md": "# Guide\n\nPages are numbered from one.\n" },
  },
  {
    name: "release-notes",
    description: "Writes release notes from a changelog",
    allowedTools: [],
    instructions: "Group the changes by kind and keep each line short.",
    references: {},
  },
];

/** Options of {@link describeSkillsManagerConformance}. */
export interface SkillsManagerConformanceOptions {
  /** Called after each test, after `close()`, to remove the skills the factory stored. */
  cleanup?: (manager: SkillsManager) => Promise<void> | void;
}

/**
 * Register the vitest suite every `SkillsManager` must pass: `prepareSession` summarising the skills,
 * `loadReferences` giving a skill's instructions and reference files, and unknown skills refused with a typed
 * error whose hint names the near match. `factory` gets {@link SKILL_FIXTURES} and makes a fresh manager that
 * serves exactly those skills.
 *
 * @example
 * describeSkillsManagerConformance("database", async (skills) => new DbSkillsManager(await seed(skills)));
 */
export function describeSkillsManagerConformance(
  name: string,
  factory: (skills: readonly SkillFixture[]) => Promise<SkillsManager> | SkillsManager,
  options: SkillsManagerConformanceOptions = {},
): void {
  describe(`SkillsManager conformance: ${name}`, () => {
    let manager: SkillsManager;
    let sessions: SessionManager;
    let sessionId: string;
    const [pdf, notes] = SKILL_FIXTURES as [SkillFixture, SkillFixture];

    beforeEach(async () => {
      manager = await factory(SKILL_FIXTURES);
      sessions = new InMemorySessionManager();
      sessionId = `session-${randomUUID()}`;
    });

    afterEach(async () => {
      await manager.close?.();
      await options.cleanup?.(manager);
    });

    it("prepareSession summarises every skill under its name", async () => {
      const summaries = await manager.prepareSession(sessionId, sessions);
      expect(Object.keys(summaries).sort()).toEqual([notes.name, pdf.name].sort());
      for (const skill of SKILL_FIXTURES) {
        const summary = summaries[skill.name]!;
        expect(summary.name).toBe(skill.name);
        expect(summary.description).toBe(skill.description);
        expect([...summary.allowedTools].sort()).toEqual([...skill.allowedTools].sort());
        expect(typeof summary.path).toBe("string");
        expect(typeof summary.metadata).toBe("object");
      }
    });

    it("prepareSession gives every session the same skills, and again for the same session", async () => {
      const first = await manager.prepareSession(sessionId, sessions);
      const again = await manager.prepareSession(sessionId, sessions);
      const other = await manager.prepareSession(`session-${randomUUID()}`, sessions);
      expect(again).toEqual(first);
      expect(other).toEqual(first);
    });

    it("loadReferences gives the skill's instructions and each reference file by its path", async () => {
      const references = await manager.loadReferences(sessionId, pdf.name, sessions);
      const texts = references.map((reference) => reference.content);
      expect(texts.some((text) => text.includes(pdf.instructions))).toBe(true);
      for (const [path, content] of Object.entries(pdf.references)) {
        const found = references.find((reference) => reference.path.endsWith(path));
        expect(found?.content).toBe(content);
      }
      for (const reference of references) expect(typeof reference.path).toBe("string");
    });

    it("loadReferences of a skill without reference files still gives its instructions", async () => {
      const references = await manager.loadReferences(sessionId, notes.name, sessions);
      expect(references.some((reference) => reference.content.includes(notes.instructions))).toBe(true);
      expect(references.some((reference) => reference.content.includes(pdf.instructions))).toBe(false);
    });

    it("loadReferences works without prepareSession first", async () => {
      const references = await manager.loadReferences(`session-${randomUUID()}`, pdf.name, sessions);
      expect(references.length).toBeGreaterThan(0);
    });

    it("refuses an unknown skill with a typed error whose hint names the near match", async () => {
      const error = await manager.loadReferences(sessionId, "pdf-reder", sessions).catch((caught) => caught);
      expect(KeelError.isInstance(error)).toBe(true);
      expect((error as KeelError).message).toContain("pdf-reder");
      expect((error as KeelError).hint).toContain(pdf.name);
    });

    it("refuses to run an unknown skill with a typed error", async () => {
      const error = await manager
        .runSkill(sessionId, "no-such-skill", {}, sessions)
        .catch((caught) => caught);
      expect(KeelError.isInstance(error)).toBe(true);
      expect((error as KeelError).message).toContain("no-such-skill");
    });
  });
}
