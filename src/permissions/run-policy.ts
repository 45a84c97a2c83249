import type { SessionSkillSummary } from "../skills/skills-manager.js";
import {
  type Capability,
  computeEffectivePolicy,
  type EffectivePolicy,
  type PolicyInput,
  type SkillPermissionDeclaration,
} from "./effective-policy.js";

/**
 * The session-state key listing the skills a session has loaded (names, in load order). Whatever loads a skill
 * into a session (the skills toolset's `load_skill`, an application) appends its name; the policy of the
 * session's next run takes that skill's declarations into account.
 */
export const LOADED_SKILLS_STATE_KEY = "keel.loadedSkills";

/** The names of the skills a session state says are loaded. */
export function loadedSkillNames(state: Readonly<Record<string, unknown>> | undefined): string[] {
  const value = state?.[LOADED_SKILLS_STATE_KEY];
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

/** Record in a session state that a skill is loaded (idempotent). */
export function markSkillLoaded(state: Record<string, unknown>, skillName: string): void {
  const names = loadedSkillNames(state);
  if (!names.includes(skillName)) state[LOADED_SKILLS_STATE_KEY] = [...names, skillName];
}

/** The permission declarations of the loaded skills, from the skills manager's summaries. */
export function skillDeclarations(
  summaries: Readonly<Record<string, SessionSkillSummary>>,
  loaded: readonly string[],
): SkillPermissionDeclaration[] {
  const declarations: SkillPermissionDeclaration[] = [];
  for (const name of loaded) {
    const summary = Object.hasOwn(summaries, name) ? summaries[name] : undefined;
    if (summary === undefined) continue;
    declarations.push({
      name,
      allowedTools: summary.allowedTools,
      requests: (summary.permissions ?? []) as Capability[],
    });
  }
  return declarations;
}

/** The policy of one run: the agent's own, or recomputed when the session has loaded skills. */
export function policyForRun(
  base: { policy: EffectivePolicy; policyInput: PolicyInput } | undefined,
  summaries: Readonly<Record<string, SessionSkillSummary>> | undefined,
  sessionState: Readonly<Record<string, unknown>> | undefined,
): EffectivePolicy | undefined {
  if (base === undefined) return undefined;
  const loaded = loadedSkillNames(sessionState);
  if (loaded.length === 0 || summaries === undefined) return base.policy;
  const skills = skillDeclarations(summaries, loaded);
  if (skills.length === 0) return base.policy;
  return computeEffectivePolicy({ ...base.policyInput, skills });
}

/** Why a run's policy was computed: when the run started, or because a skill loaded during it. */
export type PolicyComputedReason = "run_started" | "skill_loaded";

/** The `permissions.computed` payload: the rules with their sources, and the decision for each tool. */
export function permissionsComputedPayload(
  policy: EffectivePolicy,
  reason: PolicyComputedReason,
): Record<string, unknown> {
  return {
    agentId: policy.agentId,
    reason,
    enabled: policy.enabled,
    skills: policy.skills,
    rules: policy.rules,
    tools: policy.tools,
  };
}
