/** Stop conditions: small functions over what the run has done so far, evaluated at StepEnd. */

export type StopConditionSpec =
  | { type: "max_rounds"; rounds: number }
  | { type: "timeout"; seconds: number }
  | { type: "token_budget"; max_total: number }
  | { type: "consecutive_errors"; max: number }
  | { type: "stop_on_tool"; tool_name: string }
  | { type: "content_match"; pattern: string }
  | { type: "loop_detection"; window: number };

/** What the loop tells the stop conditions at the end of a step. */
export interface StepFacts {
  /** Steps finished so far, this one included. */
  steps: number;
  elapsedMs: number;
  totalTokens: number;
  /** Steps in a row whose model call or tool calls all failed. */
  consecutiveErrors: number;
  /** Text of the step's last model response. */
  lastText: string;
  /** Tool names the step's model response asked for. */
  requestedTools: readonly string[];
  /** Signatures of the latest steps, newest last (only kept when loop detection is on). */
  recentSignatures: readonly string[];
}

export interface StopDecision {
  type: StopConditionSpec["type"];
  detail: string;
}

type Check = (facts: StepFacts) => string | null;

function compile(spec: StopConditionSpec): Check | null {
  switch (spec.type) {
    case "max_rounds": {
      const { rounds } = spec;
      if (rounds <= 0) return null;
      return (facts) => (facts.steps >= rounds ? `reached ${rounds} rounds` : null);
    }
    case "timeout": {
      const limitMs = spec.seconds * 1000;
      if (limitMs <= 0) return null;
      return (facts) => (facts.elapsedMs > limitMs ? `ran longer than ${spec.seconds} s` : null);
    }
    case "token_budget": {
      const { max_total } = spec;
      if (max_total <= 0) return null;
      return (facts) =>
        facts.totalTokens > max_total ? `used ${facts.totalTokens} of ${max_total} tokens` : null;
    }
    case "consecutive_errors": {
      const { max } = spec;
      if (max <= 0) return null;
      return (facts) =>
        facts.consecutiveErrors >= max ? `${facts.consecutiveErrors} failed steps in a row` : null;
    }
    case "stop_on_tool": {
      const name = spec.tool_name;
      if (!name) return null;
      return (facts) => (facts.requestedTools.includes(name) ? `tool ${name} was requested` : null);
    }
    case "content_match": {
      if (!spec.pattern) return null;
      const pattern = new RegExp(spec.pattern);
      return (facts) => (pattern.test(facts.lastText) ? `output matched /${spec.pattern}/` : null);
    }
    case "loop_detection": {
      const { window } = spec;
      if (window < 2) return null;
      return (facts) => {
        const recent = facts.recentSignatures;
        if (recent.length < window) return null;
        const last = recent[recent.length - 1];
        for (let index = recent.length - window; index < recent.length - 1; index++) {
          if (recent[index] !== last) return null;
        }
        return `the last ${window} steps were identical`;
      };
    }
  }
}

export interface StopConditionEvaluator {
  /** No condition is enabled: the loop skips the evaluation (and building its facts) altogether. */
  readonly isEmpty: boolean;
  /** How many step signatures loop detection needs (0: none are kept). */
  readonly signatureWindow: number;
  evaluate(facts: StepFacts): StopDecision | null;
}

/** Compile a run's stop conditions; a zero or empty limit disables one. The first that fires wins. */
export function createStopConditions(specs: readonly StopConditionSpec[]): StopConditionEvaluator {
  const checks: { type: StopConditionSpec["type"]; check: Check }[] = [];
  let signatureWindow = 0;
  for (const spec of specs) {
    const check = compile(spec);
    if (!check) continue;
    checks.push({ type: spec.type, check });
    if (spec.type === "loop_detection") signatureWindow = Math.max(signatureWindow, spec.window);
  }
  return {
    isEmpty: checks.length === 0,
    signatureWindow,
    evaluate(facts) {
      for (const { type, check } of checks) {
        const detail = check(facts);
        if (detail !== null) return { type, detail };
      }
      return null;
    },
  };
}

/** What loop detection compares: the step's tool calls (names and arguments) or, without any, its text. */
export function stepSignature(text: string, calls: readonly { name: string; arguments: unknown }[]): string {
  if (calls.length === 0) return `text:${text}`;
  let signature = "tools:";
  for (const call of calls) signature += `${call.name}(${canonicalJson(call.arguments)});`;
  return signature;
}

/** JSON with object keys sorted, so equal arguments give equal text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(",")}}`;
}
