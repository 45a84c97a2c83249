import { describe, expect, it } from "vitest";
import type { SessionSkillSummary } from "../skills/skills-manager.js";
import { computeEffectivePolicy, type PolicyInput } from "./effective-policy.js";
import { LOADED_SKILLS_STATE_KEY, markSkillLoaded } from "./run-policy.js";
import { SkillPolicyWatch } from "./skill-policy-watch.js";

const policyInput: PolicyInput = {
  agentId: "a",
  tools: {
    read_file: { capabilities: [], writesFiles: false },
    write_file: { capabilities: [], writesFiles: true },
  },
};
const base = { policy: computeEffectivePolicy(policyInput), policyInput };
const summaries = {
  reader: { name: "reader", description: "reads", allowedTools: ["read_file"] },
} as unknown as Record<string, SessionSkillSummary>;

describe("SkillPolicyWatch", () => {
  it("gives nothing until a skill loads, then the policy with it, once", () => {
    const state: Record<string, unknown> = {};
    const watch = new SkillPolicyWatch(base, summaries, state);
    expect(watch.next()).toBeUndefined();
    markSkillLoaded(state, "reader");
    const next = watch.next()!;
    expect(next.skills).toEqual(["reader"]);
    expect(next.tools.write_file).toMatchObject({ effect: "deny", rule: "skill.allowed_tools" });
    expect(watch.next()).toBeUndefined();
    // Loading it again changes nothing.
    markSkillLoaded(state, "reader");
    expect(watch.next()).toBeUndefined();
  });

  it("a new list with the same names (a resumed run's restored state) recomputes nothing", () => {
    const state: Record<string, unknown> = { [LOADED_SKILLS_STATE_KEY]: ["reader"] };
    const watch = new SkillPolicyWatch(base, summaries, state);
    state[LOADED_SKILLS_STATE_KEY] = ["reader"];
    expect(watch.next()).toBeUndefined();
  });

  it("a skill the skills manager does not know leaves the base policy", () => {
    const state: Record<string, unknown> = {};
    const watch = new SkillPolicyWatch(base, summaries, state);
    markSkillLoaded(state, "unknown");
    expect(watch.next()).toBe(base.policy);
  });
});
