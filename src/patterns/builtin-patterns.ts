import { z } from "zod";
import { registerBuiltin } from "../plugins/plugin-registry.js";
import type { Pattern } from "./pattern.js";
import { PlanExecutePattern } from "./plan-execute-pattern.js";
import { ReactPattern } from "./react-pattern.js";

/** A pattern plugin yields a factory: every run gets a fresh pattern instance. */
export type PatternFactory = () => Pattern;

let registered = false;

/** Register `react` and `plan_execute`. */
export function registerPatternBuiltins(): void {
  if (registered) return;
  registered = true;
  registerBuiltin({
    kind: "pattern",
    type: "react",
    configSchema: z.object({}),
    create: (): PatternFactory => () => new ReactPattern(),
  });
  registerBuiltin({
    kind: "pattern",
    type: "plan_execute",
    configSchema: z.object({ max_plan_steps: z.number().int().positive().default(8) }),
    create: (config): PatternFactory => {
      const maxPlanSteps = config.max_plan_steps as number;
      return () => new PlanExecutePattern({ maxPlanSteps });
    },
  });
}
