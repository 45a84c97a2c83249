import { z } from "zod";
import { nearMatch } from "../../config/near-match.js";
import type { Tool, ToolContext, ToolResult } from "../../contracts/tool.js";
import { ToolError } from "../../errors/error-classes.js";
import { loadedSkillNames, markSkillLoaded } from "../../permissions/run-policy.js";
import type { PluginDefinition, PluginFactoryContext } from "../../plugins/plugin-registry.js";
import type { SessionManager } from "../../sessions/session-manager.js";
import type { SessionSkillSummary, SkillsManager } from "../../skills/skills-manager.js";
import { defineTool } from "../../tools/define-tool.js";
import type { Toolset } from "../../tools/toolset.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import { okResult } from "../filesystem/tool-result.js";

/** The code of the tool error `load_skill` raises for a name the skills manager does not know. */
export const SKILL_NOT_FOUND_CODE = "skill.not_found";

export interface SkillsToolsetOptions {
  /** The skills manager, or a getter of it (the runtime's is only known once it has initialised). */
  manager: SkillsManager | (() => SkillsManager);
  /** Passed through to the manager's calls; the `local` manager does not use it. */
  sessionManager?: SessionManager | (() => SessionManager | undefined);
}

export interface ListedSkill {
  name: string;
  description: string;
  allowedTools: string[];
}

export interface LoadedSkill {
  name: string;
  description: string;
  /** The SKILL.md body (the front matter removed). */
  instructions: string;
  /** The skill's `references/` files, workspace-relative to the skill directory. */
  references: { path: string; content: string }[];
  allowedTools: string[];
  /** True when the skill was already marked loaded in this session. */
  alreadyLoaded: boolean;
}

/**
 * `load_skill`'s arguments: `skill_id`, the name the model sees. Calls written against the earlier `name` argument
 * still work — it is read as `skill_id` when that is missing — but the model's schema shows only `skill_id`.
 */
const loadSkillInput = builtOnFirstUse(() =>
  z.preprocess(
    (value) =>
      typeof value === "object" && value !== null && !("skill_id" in value) && "name" in value
        ? { ...value, skill_id: (value as { name: unknown }).name }
        : value,
    z.object({
      skill_id: z.string().min(1).describe("The skill's name, as list_skills gives it"),
    }),
  ),
);

function resolve<T>(value: T | (() => T)): T {
  return typeof value === "function" ? (value as () => T)() : value;
}

/**
 * The skills toolset: `list_skills()` and `load_skill(skill_id)` over a skills manager. `load_skill` records
 * the skill in the session state ({@link markSkillLoaded}), so its `allowed-tools` and `permissions` take part in
 * the effective policy from the session's next run (skills only narrow or request, never grant).
 */
export function createSkillsToolset(options: SkillsToolsetOptions): Toolset {
  const manager = () => resolve(options.manager);
  const sessionManager = () =>
    (options.sessionManager === undefined ? undefined : resolve(options.sessionManager)) as SessionManager;
  const summaries = (ctx: ToolContext): Promise<Record<string, SessionSkillSummary>> =>
    manager().prepareSession(ctx.sessionId, sessionManager());

  const listSkills = defineTool({
    name: "list_skills",
    description: "List the skills available to this agent: their names and what each is for.",
    inputSchema: z.object({}),
    sideEffects: "read",
    concurrencySafe: true,
    execute: async (_input, ctx): Promise<ToolResult<{ skills: ListedSkill[] }>> => {
      const skills = Object.values(await summaries(ctx))
        .map((skill) => ({
          name: skill.name,
          description: skill.description,
          allowedTools: [...skill.allowedTools],
        }))
        .sort((a, b) => a.name.localeCompare(b.name));
      const summary =
        skills.length === 0
          ? "No skills are available"
          : `${skills.length} skill(s): ${skills.map((skill) => skill.name).join(", ")}`;
      return okResult(summary, { skills });
    },
  }) as Tool;

  const loadSkill = defineTool({
    name: "load_skill",
    description:
      "Load a skill by name: returns its instructions (SKILL.md) and reference files. Call list_skills first " +
      "to see the names.",
    inputSchema: loadSkillInput(),
    sideEffects: "read",
    execute: async (input, ctx): Promise<ToolResult<LoadedSkill>> => {
      // A direct `invoke` skips validation, so the alias is read here too.
      const name = input.skill_id ?? (input as { name?: string }).name ?? "";
      const known = await summaries(ctx);
      const skill = Object.hasOwn(known, name) ? known[name] : undefined;
      if (skill === undefined) {
        const names = Object.keys(known).sort();
        const near = nearMatch(name, names);
        let message = `unknown skill "${name}".`;
        if (near !== undefined) message += ` Did you mean "${near}"?`;
        message += names.length > 0 ? ` Known skills: ${names.join(", ")}` : " No skills are available.";
        throw new ToolError(message, {
          code: SKILL_NOT_FOUND_CODE,
          context: { skill: name, ...(near === undefined ? {} : { suggestion: near }) },
        });
      }
      const files = await manager().loadReferences(ctx.sessionId, name, sessionManager());
      const body = files.find((file) => file.path === "SKILL.md");
      const references = files.filter((file) => file !== body);
      const state = ctx.session.state;
      const alreadyLoaded = loadedSkillNames(state).includes(name);
      markSkillLoaded(state, name);
      return okResult(
        `Loaded skill ${name} with ${references.length} reference file(s)` +
          (references.length > 0 ? `: ${references.map((file) => file.path).join(", ")}` : ""),
        {
          name,
          description: skill.description,
          instructions: body?.content ?? "",
          references,
          allowedTools: [...skill.allowedTools],
          alreadyLoaded,
        },
      );
    },
  }) as Tool;

  const tools = [listSkills, loadSkill];
  return { kind: "toolset", name: "skills", tools: () => tools };
}

interface RuntimeLike {
  readonly skillsManager: SkillsManager;
  readonly sessionManager: SessionManager;
}

const skillsToolsetConfig = builtOnFirstUse(() =>
  z.object({
    tools: z
      .array(z.enum(["list_skills", "load_skill"]))
      .min(1)
      .optional(),
  }),
);

function fromRuntime(config: Record<string, unknown>, context: PluginFactoryContext): Toolset {
  const parsed = skillsToolsetConfig().parse(config);
  const runtime = context.runtime as RuntimeLike | undefined;
  if (runtime === undefined) {
    throw new ToolError("the skills toolset needs a runtime: load it through a Runtime's config");
  }
  const toolset = createSkillsToolset({
    manager: () => runtime.skillsManager,
    sessionManager: () => runtime.sessionManager,
  });
  if (parsed.tools === undefined) return toolset;
  const wanted = new Set<string>(parsed.tools);
  const tools = toolset.tools().filter((tool) => wanted.has(tool.name));
  return { kind: "toolset", name: "skills", tools: () => tools };
}

/** `{"type": "skills"}`: `list_skills` and `load_skill` over the runtime's skills manager (`skills` in the config). */
export const skillsToolsetPlugin: PluginDefinition<Toolset> = {
  kind: "tool",
  type: "skills",
  get configSchema() {
    return skillsToolsetConfig();
  },
  create: fromRuntime,
};

/** Each skills tool as a type of its own: `{"id": "load_skill", "type": "load_skill"}`. */
export const skillsToolPlugins: PluginDefinition<Tool>[] = (["list_skills", "load_skill"] as const).map(
  (name) => ({
    kind: "tool",
    type: name,
    create: (_config: Record<string, unknown>, context: PluginFactoryContext) =>
      fromRuntime({ tools: [name] }, context).tools()[0]!,
  }),
);
