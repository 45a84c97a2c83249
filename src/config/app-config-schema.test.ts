import { afterEach, describe, expect, it, vi } from "vitest";
import type { Tool } from "../contracts/tool.js";
import { ConfigValidationError } from "../errors/error-classes.js";
import { type Logger, setLogger } from "../logging/logger.js";
import { isHookObject, isPluginRefLike, isToolObject, type LLMOptions } from "./app-config-schema.js";
import { parseConfig } from "./load-config.js";

/** The error parseConfig throws for `input`; fails the test when it does not throw one. */
function failure(input: unknown): ConfigValidationError {
  try {
    parseConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigValidationError);
    return error as ConfigValidationError;
  }
  throw new Error("expected parseConfig to throw");
}

function agent(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: "a", name: "A", ...extra };
}

describe("parseConfig defaults", () => {
  it("fills every default of a minimal config", () => {
    expect(parseConfig({ agents: [{ id: "assistant", name: " Assistant " }] })).toEqual({
      version: "1.0",
      agents: [
        {
          id: "assistant",
          name: "Assistant",
          memory: { type: "buffer", config: {}, on_error: "continue" },
          pattern: { type: "react", config: {} },
          tools: [],
          runtime: {
            max_steps: 16,
            step_timeout_ms: 30000,
            session_queue_size: 1000,
            event_queue_size: 2000,
          },
          durable: { store_outage_ms: 60000 },
          stop_conditions: [],
          hooks: [],
          middleware: {},
        },
      ],
      runtime: { type: "default", config: {} },
      session: { type: "in_memory", config: {} },
      events: { type: "async", config: {} },
      skills: { type: "local", config: {} },
      queue: { type: "in_process", config: {} },
    });
  });

  it("keeps given values, fills retry defaults and trims selector names", () => {
    const config = parseConfig({
      version: "1.0",
      logging: { level: "debug", auto_configure: false },
      agents: [
        agent({
          memory: { type: " window_buffer ", config: { window: 4 }, on_error: "fail" },
          tools: [{ id: "calc", type: "calculator", enabled: false }],
          runtime: { max_steps: 3 },
          llm: { provider: "anthropic", retry: { max_attempts: 1 } },
          permissions: { allow: ["read_file"], enable: ["shell"] },
          sandbox: {
            roots: [{ path: "data", mode: "ro" }],
            max_read_bytes: 10,
            max_write_bytes: 20,
            max_list_entries: 30,
          },
          instructions: "Be brief.",
        }),
      ],
    });
    const [first] = config.agents;
    expect(first?.memory).toEqual({ type: "window_buffer", config: { window: 4 }, on_error: "fail" });
    expect(first?.tools).toEqual([{ id: "calc", type: "calculator", enabled: false, config: {} }]);
    expect(first?.runtime.max_steps).toBe(3);
    expect(first?.runtime.step_timeout_ms).toBe(30000);
    expect((first?.llm as LLMOptions | undefined)?.retry).toEqual({
      max_attempts: 1,
      initial_backoff_ms: 500,
      max_backoff_ms: 5000,
      backoff_multiplier: 2,
      retry_on_connection_errors: true,
      total_budget_ms: null,
    });
    expect((first?.llm as LLMOptions | undefined)?.timeout_ms).toBe(30000);
    expect(first?.instructions).toBe("Be brief.");
    expect(first?.sandbox).toEqual({
      roots: [{ path: "data", mode: "ro" }],
      max_read_bytes: 10,
      max_write_bytes: 20,
      max_list_entries: 30,
    });
    expect(config.logging).toEqual({ level: "debug", auto_configure: false });
  });
});

describe("unknown keys", () => {
  it.each([
    [{ agents: [agent()], agent: 1 }, "agent", "Did you mean 'agents'?"],
    [{ agents: [agent({ toolz: [] })] }, "agents[0].toolz", "Did you mean 'tools'?"],
    [
      { agents: [agent({ runtime: { max_step: 3 } })] },
      "agents[0].runtime.max_step",
      "Did you mean 'max_steps'?",
    ],
    [
      { agents: [agent({ llm: { retry: { max_attempt: 2 } } })] },
      "agents[0].llm.retry.max_attempt",
      "Did you mean 'max_attempts'?",
    ],
    [
      { agents: [agent({ memory: { type: "buffer", on_eror: "fail" } })] },
      "agents[0].memory.on_eror",
      "Did you mean 'on_error'?",
    ],
  ])("%j → %s", (input, path, hint) => {
    const error = failure(input);
    const key = path.split(".").pop();
    expect(error.issues).toEqual([{ path, message: `unknown key '${key}'`, hint }]);
    expect(error.message).toBe(`${path}: unknown key '${key}'`);
    expect(error.hint).toBe(hint);
    expect(error.code).toBe("config.validation");
  });

  it("lists the valid keys when nothing is close", () => {
    const error = failure({ agents: [agent({ runtime: { zzz: 1 } })] });
    expect(error.issues).toEqual([
      {
        path: "agents[0].runtime.zzz",
        message: "unknown key 'zzz'",
        hint: "Valid keys here: max_steps, step_timeout_ms, session_queue_size, event_queue_size, run_folders.",
      },
    ]);
  });

  it("collects every issue, unknown keys first, and counts the rest in the message", () => {
    const error = failure({ agents: [{ id: "a", nmae: "A", runtime: { max_steps: 0 } }] });
    expect(error.issues).toEqual([
      { path: "agents[0].nmae", message: "unknown key 'nmae'", hint: "Did you mean 'name'?" },
      { path: "agents[0].name", message: "missing required key 'name' (a string)" },
      {
        path: "agents[0].runtime.max_steps",
        message: "must be a whole number of steps, 1 or more, got 0",
        hint: "max_steps is how many model steps a run may take: give 1 or more, or leave it out for the default of 16.",
      },
    ]);
    expect(error.message).toBe("agents[0].nmae: unknown key 'nmae' (and 2 more issues)");
  });

  it("allows any key inside a plugin ref's config", () => {
    const config = parseConfig({
      agents: [agent({ pattern: { type: "react", config: { anything: { deep: 1 } } } })],
    });
    expect(config.agents[0]?.pattern.config).toEqual({ anything: { deep: 1 } });
  });

  it("names wrong types and values with what was expected", () => {
    expect(failure({ agents: [agent({ runtime: { max_steps: "16" } })] }).issues).toEqual([
      { path: "agents[0].runtime.max_steps", message: 'expected a number, got the string "16"' },
    ]);
    expect(failure({ agents: [agent({ tools: "calc" })] }).issues).toEqual([
      { path: "agents[0].tools", message: 'expected an array, got the string "calc"' },
    ]);
    expect(failure([]).issues).toEqual([{ path: "", message: "expected an object, got an array" }]);
    expect(failure({ agents: [agent({ sandbox: { roots: [{ path: "x", mode: "wr" }] } })] }).issues).toEqual([
      {
        path: "agents[0].sandbox.roots[0].mode",
        message: "expected one of 'ro', 'rw', got the string \"wr\"",
        hint: "Valid values: 'ro', 'rw'.",
      },
    ]);
  });
});

describe("removed keys", () => {
  it.each([
    ["execution_policy", "ToolExecutor.evaluatePolicy"],
    ["followup_resolver", "Pattern.resolveFollowup"],
    ["response_repair_policy", "Pattern.repairEmptyResponse"],
  ])("%s is rejected with a hint naming %s", (key, replacement) => {
    const error = failure({ agents: [agent({ [key]: { type: "x" } })] });
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]?.path).toBe(`agents[0].${key}`);
    expect(error.issues[0]?.message).toBe(`'${key}' was removed`);
    expect(error.issues[0]?.hint).toContain(replacement);
    expect(error.hint).toContain(replacement);
  });

  it("is rejected anywhere in an agent", () => {
    const error = failure({ agents: [agent({ runtime: { execution_policy: {} } })] });
    expect(error.issues[0]).toMatchObject({
      path: "agents[0].runtime.execution_policy",
      message: "'execution_policy' was removed",
    });
  });
});

describe("plugin refs", () => {
  const refHint =
    'Use "type" for a builtin or registered plugin, e.g. {"type": "buffer"}, or "impl" for your own code, e.g. ' +
    '{"impl": "./plugins/my-memory.js#MyMemory"}.';

  it("rejects both type and impl", () => {
    expect(failure({ agents: [agent({ memory: { type: "buffer", impl: "./m.js#M" } })] }).issues).toEqual([
      { path: "agents[0].memory", message: "give exactly one of 'type' or 'impl', not both", hint: refHint },
    ]);
  });

  it("rejects neither, also when both are empty or null", () => {
    const expected = [
      {
        path: "session",
        message: `needs 'type' (a builtin name) or 'impl' ("<module specifier>#<export>")`,
        hint: refHint,
      },
    ];
    expect(failure({ agents: [agent()], session: { config: {} } }).issues).toEqual(expected);
    expect(failure({ agents: [agent()], session: { type: "  ", impl: null } }).issues).toEqual(expected);
  });

  it.each(["./m.js", "./m.js#", "#M"])("rejects impl %j without a module and an export", (impl) => {
    expect(failure({ agents: [agent({ tool_executor: { impl } })] }).issues).toEqual([
      {
        path: "agents[0].tool_executor.impl",
        message: `'${impl}' is not of the form "<module specifier>#<export>"`,
        hint: 'Write impl as "<module specifier>#<export>", e.g. "./plugins/my-memory.js#MyMemory".',
      },
    ]);
  });

  it("accepts impl with a package subpath import", () => {
    const config = parseConfig({ agents: [agent({ pattern: { impl: " #plugins/p.js#Pattern " } })] });
    expect(config.agents[0]?.pattern).toEqual({ type: undefined, impl: "#plugins/p.js#Pattern", config: {} });
  });

  it("requires a tool id and rejects duplicate tool ids naming both indices", () => {
    const error = failure({
      agents: [
        agent({ tools: [{ id: "calc", type: "a" }, { type: "b" }, { id: "calc", impl: "./t.js#T" }] }),
      ],
    });
    expect(error.issues).toEqual([
      { path: "agents[0].tools[1].id", message: "missing required key 'id' (a string)" },
      {
        path: "agents[0].tools[2].id",
        message: "duplicate tool id 'calc' (tools[0] and tools[2])",
        hint: "Tool ids must be unique within an agent: the model calls tools by id. Rename one of them.",
      },
    ]);
  });
});

describe("agents", () => {
  const atLeastOne = {
    path: "agents",
    message: "'agents' must contain at least one item",
    hint: 'Add an agent, e.g. {"agents": [{"id": "assistant", "name": "Assistant"}]}.',
  };

  it("requires at least one agent", () => {
    expect(failure({ agents: [] }).issues).toEqual([atLeastOne]);
    expect(failure({}).issues).toEqual([atLeastOne]);
    expect(failure({ agents: [] }).message).toBe("agents: 'agents' must contain at least one item");
  });

  it("rejects duplicate agent ids naming both indices, also when another agent is invalid", () => {
    expect(failure({ agents: [agent(), { id: "b", name: "" }, agent()] }).issues).toEqual([
      { path: "agents[1].name", message: "must not be empty" },
      {
        path: "agents[2].id",
        message: "duplicate agent id 'a' (agents[0] and agents[2])",
        hint: "Agent ids must be unique; runs select an agent by id. Rename one of them.",
      },
    ]);
  });
});

describe("stop conditions", () => {
  it("accepts every type", () => {
    const stop_conditions = [
      { type: "max_rounds", rounds: 5 },
      { type: "timeout", seconds: 0 },
      { type: "token_budget", max_total: 1000 },
      { type: "consecutive_errors", max: 3 },
      { type: "stop_on_tool", tool_name: "finish" },
      { type: "content_match", pattern: "^DONE\\b" },
      { type: "loop_detection", window: 3 },
      { type: "loop_detection", window: 0 },
    ];
    expect(parseConfig({ agents: [agent({ stop_conditions })] }).agents[0]?.stop_conditions).toEqual(
      stop_conditions,
    );
  });

  it("rejects unknown fields, unknown types, bad regexes and bad limits with their paths", () => {
    const error = failure({
      agents: [
        agent({
          stop_conditions: [
            { type: "max_rounds", rounds: 3, max: 1 },
            { type: "max_round", rounds: 3 },
            { rounds: 3 },
            { type: "content_match", pattern: "(" },
            { type: "loop_detection", window: 1 },
            { type: "timeout", seconds: -1 },
            { type: "token_budget", max_total: 1.5 },
          ],
        }),
      ],
    });
    expect(error.issues).toEqual([
      {
        path: "agents[0].stop_conditions[0].max",
        message: "unknown key 'max'",
        hint: "Valid keys here: type, rounds.",
      },
      {
        path: "agents[0].stop_conditions[1].type",
        message: "unknown type 'max_round'",
        hint: "Did you mean 'max_rounds'?",
      },
      {
        path: "agents[0].stop_conditions[2].type",
        message: "missing required key 'type'",
        hint: "Valid values: 'max_rounds', 'timeout', 'token_budget', 'consecutive_errors', 'stop_on_tool', 'content_match', 'loop_detection'.",
      },
      {
        path: "agents[0].stop_conditions[3].pattern",
        message: "invalid regular expression: /(/: Unterminated group",
        hint: "Write a JavaScript regular expression; escape a literal ( [ { . * + ? with a backslash.",
      },
      { path: "agents[0].stop_conditions[4].window", message: "must be at least 2 (or 0 to disable)" },
      { path: "agents[0].stop_conditions[5].seconds", message: "must be at least 0, got -1" },
      { path: "agents[0].stop_conditions[6].max_total", message: "expected an integer, got 1.5" },
    ]);
  });
});

describe("llm", () => {
  let previous: Logger | undefined;
  afterEach(() => {
    if (previous) setLogger(previous);
    previous = undefined;
  });

  it("keeps extra keys and warns about one that looks like a typo", () => {
    const warn = vi.fn();
    previous = setLogger({ debug: () => {}, info: () => {}, warn, error: () => {} });
    const llm = parseConfig({
      agents: [
        agent({
          llm: {
            provider: "openai_compatible",
            api_base: "http://localhost:8000/v1",
            seed: 7,
            top_p: 0.9,
            parallel_tool_calls: false,
            temprature: 0.2,
            extra_headers: { "X-Team": "a" },
          },
        }),
      ],
    }).agents[0]?.llm;
    expect(llm).toMatchObject({ seed: 7, top_p: 0.9, parallel_tool_calls: false, temprature: 0.2 });
    expect((llm as LLMOptions | undefined)?.extra_headers).toEqual({ "X-Team": "a" });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toContain("did you mean 'temperature'?");
  });

  it("requires api_base for openai_compatible", () => {
    expect(failure({ agents: [agent({ llm: { provider: "openai_compatible" } })] }).issues).toEqual([
      {
        path: "agents[0].llm.api_base",
        message: "is required when provider is 'openai_compatible'",
        hint: "Set 'api_base' to the server's base URL, e.g. \"https://api.openai.com/v1\".",
      },
    ]);
  });

  it("validates known options", () => {
    const error = failure({
      agents: [
        agent({
          llm: {
            provider: "antropic",
            temperature: 2.5,
            max_tokens: 0,
            retry: { backoff_multiplier: 0.5 },
            pricing: { input: -1 },
            extra_headers: { "": "x" },
          },
        }),
      ],
    });
    expect(error.issues).toEqual([
      {
        path: "agents[0].llm.provider",
        message:
          "expected one of 'mock', 'anthropic', 'openai_compatible', 'host', got the string \"antropic\"",
        hint: "Did you mean 'anthropic'?",
      },
      { path: "agents[0].llm.temperature", message: "must be at most 2, got 2.5" },
      { path: "agents[0].llm.max_tokens", message: "must be greater than 0, got 0" },
      { path: "agents[0].llm.pricing.input", message: "must be at least 0, got -1" },
      { path: "agents[0].llm.retry.backoff_multiplier", message: "must be at least 1, got 0.5" },
      { path: 'agents[0].llm.extra_headers[""]', message: 'invalid key "": must not be empty' },
    ]);
  });
});

describe("code-first entries", () => {
  const tool: Tool = {
    name: "add",
    description: "Adds",
    schema: () => ({ type: "object" }),
    executionSpec: () => ({}) as ReturnType<Tool["executionSpec"]>,
    invoke: () => 42,
  };
  class Audit {
    stepEnd(): void {}
  }

  it("keeps Tool objects, hook objects and middleware functions as they are", () => {
    const hook = new Audit();
    const plainHook = { toolGate: () => undefined };
    const middleware = async (_ctx: unknown, next: () => Promise<unknown>) => next();
    const first = parseConfig({
      agents: [
        agent({
          tools: [tool, { id: "calc", type: "calculator" }],
          hooks: [hook, plainHook, { type: "audit_log" }],
          middleware: { agent: [middleware], function: [{ impl: "./mw.js#Retry" }] },
        }),
      ],
    }).agents[0];
    expect(first?.tools[0]).toBe(tool);
    expect(first?.tools[1]).toEqual({ id: "calc", type: "calculator", enabled: true, config: {} });
    expect(first?.hooks[0]).toBe(hook);
    expect(first?.hooks[1]).toBe(plainHook);
    expect(first?.hooks[2]).toEqual({ type: "audit_log", config: {} });
    expect(first?.middleware.agent?.[0]).toBe(middleware);
  });

  it("treats a plain object with type or impl as a ref, and rejects a tool name twice", () => {
    const error = failure({
      agents: [
        agent({ tools: [tool, { id: "add", type: "calculator" }], hooks: [{ type: "x", runStart() {} }] }),
      ],
    });
    expect(error.issues).toEqual([
      {
        path: "agents[0].hooks[0].runStart",
        message: "unknown key 'runStart'",
        hint: "Valid keys here: type, impl, config.",
      },
      {
        path: "agents[0].tools[1].id",
        message: "duplicate tool id 'add' (tools[0] and tools[1])",
        hint: "Tool ids must be unique within an agent: the model calls tools by id. Rename one of them.",
      },
    ]);
  });

  it("reports a non-ref entry in ref terms", () => {
    expect(failure({ agents: [agent({ middleware: { chat: [5] } })] }).issues).toEqual([
      { path: "agents[0].middleware.chat[0]", message: "expected an object, got 5" },
    ]);
  });

  it("classifies entries", () => {
    expect(isToolObject(tool)).toBe(true);
    expect(isToolObject({ ...tool, type: "x" })).toBe(false);
    expect(isToolObject({ name: "x", invoke() {} })).toBe(false);
    expect(isHookObject(new Audit())).toBe(true);
    expect(isHookObject({ other() {} })).toBe(false);
    expect(isPluginRefLike({ impl: "./x.js#X" })).toBe(true);
    expect(isPluginRefLike(new Audit())).toBe(false);
  });
});
