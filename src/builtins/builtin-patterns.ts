import { z } from "zod";
import type { Pattern } from "../patterns/pattern.js";
import { PlanExecutePattern } from "../patterns/plan-execute-pattern.js";
import { ReactPattern } from "../patterns/react-pattern.js";
import { registerBuiltin } from "../plugins/plugin-registry.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";

/** A pattern plugin yields a factory: every run gets a fresh pattern instance. */
export type PatternFactory = () => Pattern;

const reactConfig = builtOnFirstUse(() => z.object({}));
const planExecuteConfig = builtOnFirstUse(() =>
  z.object({ max_plan_steps: z.number().int().positive().default(8) }),
);

let registered = false;

/** Register `react` and `plan_execute`. */
export function registerPatternBuiltins(): void {
  if (registered) return;
  registered = true;
  registerBuiltin({
    kind: "pattern",
    type: "react",
    get configSchema() {
      return reactConfig();
    },
    create: (): PatternFactory => () => new ReactPattern(),
  });
  registerBuiltin({
    kind: "pattern",
    type: "plan_execute",
    get configSchema() {
      return planExecuteConfig();
    },
    create: (config): PatternFactory => {
      const maxPlanSteps = config.max_plan_steps as number;
      return () => new PlanExecutePattern({ maxPlanSteps });
    },
  });
}
