// One schema for the whole agent.json on purpose: split, its error paths would no longer line up.
import { z } from "zod";
import { type Hook, PHASES } from "../contracts/hook.js";
import { isLanguageModel, type LanguageModel } from "../contracts/language-model.js";
import type {
  AgentMiddleware,
  AnyMiddleware,
  ChatMiddleware,
  FunctionMiddleware,
} from "../contracts/middleware.js";
import type { OutputType } from "../contracts/run-types.js";
import type { Tool } from "../contracts/tool.js";
import { getLogger } from "../logging/logger.js";
import { isStandardSchema } from "../schema/to-json-schema.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import { nearMatch } from "./near-match.js";

/**
 * The one schema of `agent.json`. Keys stay snake_case, as existing agent.json
 * files write them, so those files load unchanged. Every object is strict except `llm` (extra keys are sent to
 * the provider) and the `config` of a plugin ref (the plugin's own schema checks it when it loads).
 */

// ── code-first entries ────────────────────────────────────────────────────────────────────────────────────

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** A plain object with a `type` or `impl` key is a plugin ref, whatever else it holds. */
export function isPluginRefLike(value: unknown): boolean {
  return isPlainObject(value) && ("type" in value || "impl" in value);
}

/** A Tool given in place of a ref: anything with a `name`, an `invoke` method and a `schema` method. */
export function isToolObject(value: unknown): value is Tool {
  if (typeof value !== "object" || value === null || isPluginRefLike(value)) return false;
  const candidate = value as Partial<Record<"name" | "invoke" | "schema", unknown>>;
  return (
    typeof candidate.name === "string" &&
    typeof candidate.invoke === "function" &&
    typeof candidate.schema === "function"
  );
}

/** A hook given in place of a ref: an object or instance with at least one of the nine phase methods. */
export function isHookObject(value: unknown): value is Hook {
  if (typeof value !== "object" || value === null || isPluginRefLike(value)) return false;
  return PHASES.some((phase) => typeof (value as Record<string, unknown>)[phase] === "function");
}

/**
 * A runtime component given in place of a ref (a store, an event bus, a skills manager): an object, not a ref,
 * with every method its seam needs. Only the methods are checked here; loading checks them again by name.
 */
export function isComponentObject(value: unknown, methods: readonly string[]): value is object {
  if (typeof value !== "object" || value === null || isPluginRefLike(value)) return false;
  return methods.every((method) => typeof (value as Record<string, unknown>)[method] === "function");
}

/** The methods each runtime component given as an object must have. */
export const COMPONENT_METHODS = {
  session: ["session", "getState", "setState", "appendMessage", "loadMessages"],
  events: ["subscribe", "emit", "publish"],
  skills: ["prepareSession", "loadReferences", "runSkill"],
  queue: ["enqueue", "consume", "close"],
} as const satisfies Record<string, readonly string[]>;

/** A top-level component: a PluginRef, or (code-first) the component itself, which its caller owns. */
function componentEntry(seam: keyof typeof COMPONENT_METHODS, builtin: string) {
  const methods = COMPONENT_METHODS[seam];
  return z
    .union([
      z.custom<object>((value) => isComponentObject(value, methods), {
        message: `not a ${seam} component (needs ${methods.join(", ")})`,
      }),
      pluginRefSchema(),
    ])
    .prefault({ type: builtin });
}

/** Middleware given in place of a ref: a `(ctx, next)` function or an object with `process(ctx, next)`. */
export function isMiddlewareEntry(value: unknown): boolean {
  if (typeof value === "function") return true;
  if (typeof value !== "object" || value === null || isPluginRefLike(value)) return false;
  return typeof (value as { process?: unknown }).process === "function";
}

// ── plugin refs ────────────────────────────────────────────────────────────────────────────────────

const IMPL_FORM = '"<module specifier>#<export>"';
const REF_HINT =
  'Use "type" for a builtin or registered plugin, e.g. {"type": "buffer"}, or "impl" for your own code, e.g. ' +
  '{"impl": "./plugins/my-memory.js#MyMemory"}.';

// Selector names are trimmed, and an empty one (or null) is absent.
const selectorName = builtOnFirstUse(() =>
  z
    .string()
    .trim()
    .nullish()
    .transform((value) => value || undefined),
);

const refFields = builtOnFirstUse(() => ({
  type: selectorName(),
  impl: selectorName(),
  config: z.record(z.string(), z.unknown()).default(() => ({})),
}));

function checkRef(
  ref: { type?: string | undefined; impl?: string | undefined },
  ctx: z.core.$RefinementCtx,
): void {
  if (ref.type !== undefined && ref.impl !== undefined) {
    ctx.addIssue({
      code: "custom",
      message: "give exactly one of 'type' or 'impl', not both",
      params: { hint: REF_HINT },
    });
  } else if (ref.type === undefined && ref.impl === undefined) {
    ctx.addIssue({
      code: "custom",
      message: `needs 'type' (a builtin name) or 'impl' (${IMPL_FORM})`,
      params: { hint: REF_HINT },
    });
  }
  if (ref.impl !== undefined) {
    // lastIndexOf: a specifier may itself contain "#" (package subpath imports such as "#plugins/x.js").
    const hash = ref.impl.lastIndexOf("#");
    if (hash <= 0 || hash === ref.impl.length - 1) {
      ctx.addIssue({
        code: "custom",
        path: ["impl"],
        message: `'${ref.impl}' is not of the form ${IMPL_FORM}`,
        params: { hint: `Write impl as ${IMPL_FORM}, e.g. "./plugins/my-memory.js#MyMemory".` },
      });
    }
  }
}

/** `{type | impl, config?}`: a builtin (or registered) plugin by name, or an export of a module. */
export const pluginRefSchema = builtOnFirstUse(() => z.strictObject(refFields()).superRefine(checkRef));

/** A memory ref; `on_error: "continue"` keeps a run going when the memory fails. */
export const memoryRefSchema = builtOnFirstUse(() =>
  z
    .strictObject({ ...refFields(), on_error: z.enum(["continue", "fail"]).default("continue") })
    .superRefine(checkRef),
);

/** `{id, type | impl, enabled = true, config?}`; `id` is the name the model and patterns call the tool by. */
export const toolRefSchema = builtOnFirstUse(() =>
  z
    .strictObject({ id: z.string().trim().min(1), ...refFields(), enabled: z.boolean().default(true) })
    .superRefine(checkRef),
);

// In each union the code-first object comes first and the ref last; config-issues reports the last branch's
// issues when nothing fits, because those say what a config file should hold.
/** A `tools` entry: a ToolRef, or (code-first) a Tool object kept as it is. */
export const toolEntrySchema = builtOnFirstUse(() =>
  z.union([z.custom<Tool>(isToolObject, { message: "not a Tool" }), toolRefSchema()]),
);
/** A `hooks` entry: a PluginRef, or (code-first) a Hook object kept as it is. */
export const hookEntrySchema = builtOnFirstUse(() =>
  z.union([z.custom<Hook>(isHookObject, { message: "not a Hook" }), pluginRefSchema()]),
);
/** A middleware entry of one level: a PluginRef, or (code-first) middleware kept as it is. */
function middlewareEntry<M>() {
  return z.union([z.custom<M>(isMiddlewareEntry, { message: "not middleware" }), pluginRefSchema()]);
}
/** A middleware entry of any level. */
export const middlewareEntrySchema = builtOnFirstUse(() => middlewareEntry<AnyMiddleware>());

// ── options ──────────────────────────────────────────────────────────────────────────────────────────────

const positiveInt = builtOnFirstUse(() => z.number().int().positive());

/** A run's step limit: a whole number of model steps, one at least (with none, a run could not even answer). */
const stepLimit = builtOnFirstUse(() =>
  z.number().superRefine((value, ctx) => {
    if (Number.isInteger(value) && value >= 1) return;
    ctx.addIssue({
      code: "custom",
      message: `must be a whole number of steps, 1 or more, got ${value}`,
      params: {
        hint: "max_steps is how many model steps a run may take: give 1 or more, or leave it out for the default of 16.",
      },
    });
  }),
);

/** Per-agent limits and queue sizes. */
export const runtimeOptionsSchema = builtOnFirstUse(() =>
  z.strictObject({
    max_steps: stepLimit().default(16),
    step_timeout_ms: positiveInt().default(30_000),
    session_queue_size: positiveInt().default(1000),
    event_queue_size: positiveInt().default(2000),
    /**
     * Run folders (decision 0007): `true` or `{root_dir?}` makes `<root_dir>/runs/<run-id>/` for each run
     * (`root_dir` relative to the config's directory, default that directory); absent or `false`: none.
     */
    run_folders: z
      .union([z.boolean(), z.strictObject({ root_dir: z.string().trim().min(1).optional() })])
      .optional(),
  }),
);

/** How a durable run bears a session store that stops answering (decision 0027). */
export const durableOptionsSchema = builtOnFirstUse(() =>
  z.strictObject({
    /**
     * How long a durable run waits for its store to answer again (a restarted server, a dropped connection, a
     * full disk) before it fails with `store.unavailable`, resumable from its latest checkpoint. 0: fail at once.
     */
    store_outage_ms: z.number().int().nonnegative().default(60_000),
  }),
);

/** Retries of model calls. */
export const llmRetryOptionsSchema = builtOnFirstUse(() =>
  z.strictObject({
    max_attempts: z.number().int().min(1).default(3),
    initial_backoff_ms: z.number().int().nonnegative().default(500),
    max_backoff_ms: z.number().int().nonnegative().default(5000),
    backoff_multiplier: z.number().min(1).default(2),
    retry_on_connection_errors: z.boolean().default(true),
    total_budget_ms: z.number().int().positive().nullable().default(null),
  }),
);

const price = builtOnFirstUse(() => z.number().nonnegative().optional());
/** USD per 1M tokens; overrides the builtin price table field by field. */
export const llmPricingSchema = builtOnFirstUse(() =>
  z.strictObject({
    input: price(),
    output: price(),
    cached_read: price(),
    cached_write: price(),
  }),
);

const llmFields = builtOnFirstUse(() => ({
  provider: z.enum(["mock", "anthropic", "openai_compatible", "host"]).default("mock"),
  model: z.string().trim().min(1).optional(),
  api_base: z.string().trim().min(1).optional(),
  api_key_env: z.string().trim().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: positiveInt().optional(),
  timeout_ms: positiveInt().default(30_000),
  stream_endpoint: z.string().trim().min(1).optional(),
  pricing: llmPricingSchema().optional(),
  retry: llmRetryOptionsSchema().optional(),
  extra_headers: z.record(z.string().min(1), z.string()).optional(),
  // null is how a config file says "detect it" / "pick by api_base".
  reasoning_model: z
    .boolean()
    .nullish()
    .transform((value) => value ?? undefined),
  openai_api_style: z
    .enum(["chat_completions", "responses"])
    .nullish()
    .transform((value) => value ?? undefined),
  /** The mock model's scripted turns; the mock provider validates them. */
  script: z.array(z.unknown()).optional(),
}));

/** Model options. The one open object: unknown keys (`seed`, `top_p`, …) are kept and sent on. */
export const llmOptionsSchema = builtOnFirstUse(() => {
  const fields = llmFields();
  const keys = Object.keys(fields);
  return z.looseObject(fields).superRefine((llm, ctx) => {
    if (llm.provider === "openai_compatible" && llm.api_base === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["api_base"],
        message: "is required when provider is 'openai_compatible'",
        params: { hint: "Set 'api_base' to the server's base URL, e.g. \"https://api.openai.com/v1\"." },
      });
    }
    // Extra keys are legal here, so a misspelt option would silently do nothing; say so without failing.
    for (const key of Object.keys(llm)) {
      if (keys.includes(key)) continue;
      const near = nearMatch(key, keys);
      if (near !== undefined) {
        getLogger().warn(
          `llm option '${key}' is not a Keel option and is sent to the provider as is; did you mean '${near}'?`,
        );
      }
    }
  });
});

const limit = builtOnFirstUse(() => z.number().int().nonnegative());

/** `content_match` patterns are compiled when the config loads, so a bad one fails before any run. */
const regexSource = builtOnFirstUse(() =>
  z.string().superRefine((source, ctx) => {
    try {
      new RegExp(source);
    } catch (error) {
      ctx.addIssue({
        code: "custom",
        message: `invalid regular expression: ${(error as Error).message.replace(/^Invalid regular expression: /, "")}`,
        params: {
          hint: "Write a JavaScript regular expression; escape a literal ( [ { . * + ? with a backslash.",
        },
      });
    }
  }),
);

/** Stop conditions, tagged by `type`; a limit of 0 (or an empty string) disables one. */
export const stopConditionSpecSchema = builtOnFirstUse(() =>
  z.discriminatedUnion("type", [
    z.strictObject({ type: z.literal("max_rounds"), rounds: limit() }),
    z.strictObject({ type: z.literal("timeout"), seconds: limit() }),
    z.strictObject({ type: z.literal("token_budget"), max_total: limit() }),
    z.strictObject({ type: z.literal("consecutive_errors"), max: limit() }),
    z.strictObject({ type: z.literal("stop_on_tool"), tool_name: z.string() }),
    z.strictObject({ type: z.literal("content_match"), pattern: regexSource() }),
    z.strictObject({
      type: z.literal("loop_detection"),
      window: limit().refine((window) => window === 0 || window >= 2, {
        message: "must be at least 2 (or 0 to disable)",
      }),
    }),
  ]),
);

/** Permission rules the effective policy starts from. */
export const permissionsConfigSchema = builtOnFirstUse(() =>
  z.strictObject({
    allow: z.array(z.string().min(1)).optional(),
    deny: z.array(z.string().min(1)).optional(),
    enable: z.array(z.enum(["destructive", "shell", "network"])).optional(),
  }),
);

/** Roots and size limits of the filesystem sandbox. */
export const sandboxConfigSchema = builtOnFirstUse(() =>
  z.strictObject({
    roots: z.array(z.strictObject({ path: z.string().trim().min(1), mode: z.enum(["ro", "rw"]) })).optional(),
    max_read_bytes: positiveInt().optional(),
    max_write_bytes: positiveInt().optional(),
    max_list_entries: positiveInt().optional(),
    large_output_bytes: positiveInt().optional(),
  }),
);

/** Middleware at its three levels. */
export const middlewareConfigSchema = builtOnFirstUse(() =>
  z.strictObject({
    agent: z.array(middlewareEntry<AgentMiddleware>()).optional(),
    chat: z.array(middlewareEntry<ChatMiddleware>()).optional(),
    function: z.array(middlewareEntry<FunctionMiddleware>()).optional(),
  }),
);

// ── agents and the app ───────────────────────────────────────────────────────────────────────────────────

/** Reports every later entry whose key an earlier entry already used, naming both indices. */
function checkUnique(
  entries: readonly unknown[],
  ctx: z.core.$RefinementCtx,
  what: {
    noun: string;
    list: string;
    keyOf: (entry: unknown) => [key: string, field: string] | undefined;
    hint: string;
  },
): void {
  // With `when` the check also sees input that failed to parse; only an array has entries to compare.
  if (!Array.isArray(entries)) return;
  const seen = new Map<string, number>();
  entries.forEach((entry, index) => {
    const found = what.keyOf(entry);
    if (!found) return;
    const [key, field] = found;
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, index);
      return;
    }
    ctx.addIssue({
      code: "custom",
      path: field ? [index, field] : [index],
      message: `duplicate ${what.noun} '${key}' (${what.list}[${first}] and ${what.list}[${index}])`,
      params: { hint: what.hint },
    });
  });
}

// Duplicate checks run even when some entries have other problems, so one pass reports everything.
const always = { when: () => true };

/** One agent. */
export const agentDefinitionSchema = builtOnFirstUse(() =>
  z.strictObject({
    id: z.string().trim().min(1),
    name: z.string().trim().min(1),
    description: z.string().optional(),
    /** The system prompt. */
    instructions: z.string().optional(),
    memory: memoryRefSchema().prefault({ type: "buffer" }),
    pattern: pluginRefSchema().prefault({ type: "react" }),
    /** Model options, or (code-first) any LanguageModel object such as `scriptedModel([...])`. */
    llm: z.union([z.custom<LanguageModel>(isLanguageModel), llmOptionsSchema()]).optional(),
    tool_executor: pluginRefSchema().optional(),
    context_assembler: pluginRefSchema().optional(),
    tools: z
      .array(toolEntrySchema())
      .superRefine(
        (tools, ctx) =>
          checkUnique(tools, ctx, {
            noun: "tool id",
            list: "tools",
            keyOf: (tool) => {
              const entry = tool as { id?: unknown; name?: unknown } | null;
              if (isToolObject(entry)) return [entry.name, ""];
              return typeof entry?.id === "string" ? [entry.id, "id"] : undefined;
            },
            hint: "Tool ids must be unique within an agent: the model calls tools by id. Rename one of them.",
          }),
        always,
      )
      .default(() => []),
    runtime: runtimeOptionsSchema().prefault({}),
    durable: durableOptionsSchema().prefault({}),
    stop_conditions: z.array(stopConditionSpecSchema()).default(() => []),
    hooks: z.array(hookEntrySchema()).default(() => []),
    middleware: middlewareConfigSchema().prefault({}),
    permissions: permissionsConfigSchema().optional(),
    sandbox: sandboxConfigSchema().optional(),
    /**
     * Code-first only: a zod (or any Standard Schema) schema every run's final output must match, unless the run
     * gives its own `outputType`. `defineAgent` keeps its type, so runs that name the agent are typed by it.
     */
    output_type: z
      .custom<OutputType>(isStandardSchema, {
        message: "not a Standard Schema",
        params: { hint: "Give output_type in code: a zod schema or any other Standard Schema object." },
      })
      .optional(),
  }),
);

/** Logging set up by the runtime. */
export const loggingConfigSchema = builtOnFirstUse(() =>
  z.strictObject({
    level: z.enum(["debug", "info", "warn", "error"]).optional(),
    auto_configure: z.boolean().optional(),
  }),
);

/** A whole config: `{"agents": [...]}` alone is complete; omitted components default to builtins. */
export const appConfigSchema = builtOnFirstUse(() =>
  z.strictObject({
    version: z.string().default("1.0"),
    // A missing list is an empty one, so both get "must contain at least one item".
    agents: z
      .array(agentDefinitionSchema())
      .prefault(() => [])
      .superRefine((agents, ctx) => {
        if (Array.isArray(agents) && agents.length === 0) {
          ctx.addIssue({
            code: "custom",
            message: "'agents' must contain at least one item",
            params: { hint: 'Add an agent, e.g. {"agents": [{"id": "assistant", "name": "Assistant"}]}.' },
          });
        }
        checkUnique(agents, ctx, {
          noun: "agent id",
          list: "agents",
          keyOf: (agent) => {
            const id = (agent as { id?: unknown } | null)?.id;
            return typeof id === "string" ? [id, "id"] : undefined;
          },
          hint: "Agent ids must be unique; runs select an agent by id. Rename one of them.",
        });
      }, always),
    runtime: pluginRefSchema().prefault({ type: "default" }),
    session: componentEntry("session", "in_memory"),
    events: componentEntry("events", "async"),
    skills: componentEntry("skills", "local"),
    queue: componentEntry("queue", "in_process"),
    logging: loggingConfigSchema().optional(),
  }),
);

/** A validated config: every default filled in. */
export type AppConfig = z.output<ReturnType<typeof appConfigSchema>>;
/** One validated agent. */
export type AgentDefinition = z.output<ReturnType<typeof agentDefinitionSchema>>;
/** A plugin selector: exactly one of `type` / `impl`, plus `config`. */
export type PluginRef = z.output<ReturnType<typeof pluginRefSchema>>;
/** The memory selector, with `on_error`. */
export type MemoryRef = z.output<ReturnType<typeof memoryRefSchema>>;
/** A tool selector from a config file. */
export type ToolRef = z.output<ReturnType<typeof toolRefSchema>>;
/** A `tools` entry: a ref, or a Tool object given in code. */
export type ToolEntry = z.output<ReturnType<typeof toolEntrySchema>>;
/** A `hooks` entry: a ref, or a Hook object given in code. */
export type HookEntry = z.output<ReturnType<typeof hookEntrySchema>>;
/** A middleware entry: a ref, or middleware given in code. */
export type MiddlewareEntry = z.output<ReturnType<typeof middlewareEntrySchema>>;
/** Model options; unknown keys are kept. */
export type LLMOptions = z.output<ReturnType<typeof llmOptionsSchema>>;
/** Model-call retry options. */
export type LLMRetryOptions = z.output<ReturnType<typeof llmRetryOptionsSchema>>;
/** Price overrides in USD per 1M tokens. */
export type LLMPricing = z.output<ReturnType<typeof llmPricingSchema>>;
/** Per-agent limits and queue sizes. */
export type RuntimeOptions = z.output<ReturnType<typeof runtimeOptionsSchema>>;
/** How a durable run bears a store outage. */
export type DurableOptions = z.output<ReturnType<typeof durableOptionsSchema>>;
/** One stop condition. */
export type StopConditionSpec = z.output<ReturnType<typeof stopConditionSpecSchema>>;
/** Config permission rules. */
export type PermissionsConfig = z.output<ReturnType<typeof permissionsConfigSchema>>;
/** Sandbox roots and limits. */
export type SandboxConfig = z.output<ReturnType<typeof sandboxConfigSchema>>;
/** Middleware entries by level. */
export type MiddlewareConfig = z.output<ReturnType<typeof middlewareConfigSchema>>;
/** Logging options. */
export type LoggingConfig = z.output<ReturnType<typeof loggingConfigSchema>>;
