import type { SessionSkillSummary } from "../skills/skills-manager.js";
import type { EffectivePolicy, PolicyInput } from "./effective-policy.js";
import { LOADED_SKILLS_STATE_KEY, loadedSkillNames, policyForRun } from "./run-policy.js";

/**
 * Recomputes a run's effective policy when a skill loads during the run ("recomputed when a skill
 * loads"). {@link markSkillLoaded} replaces the session state's loaded-skills list rather than changing it, so
 * one reference comparison after each tool step says whether anything may have changed; the names are compared
 * only then (a resumed run's restored state is a new list with the same names).
 */
export class SkillPolicyWatch {
  private seen: unknown;
  private seenNames: string;

  constructor(
    private readonly base: { policy: EffectivePolicy; policyInput: PolicyInput },
    private readonly summaries: Readonly<Record<string, SessionSkillSummary>> | undefined,
    private readonly state: Readonly<Record<string, unknown>>,
  ) {
    this.seen = state[LOADED_SKILLS_STATE_KEY];
    this.seenNames = loadedSkillNames(state).join("\n");
  }

  /** The policy with the skills loaded since the last look, or undefined when none loaded. */
  next(): EffectivePolicy | undefined {
    const current = this.state[LOADED_SKILLS_STATE_KEY];
    if (current === this.seen) return undefined;
    this.seen = current;
    const names = loadedSkillNames(this.state).join("\n");
    if (names === this.seenNames) return undefined;
    this.seenNames = names;
    return policyForRun(this.base, this.summaries, this.state);
  }
}
