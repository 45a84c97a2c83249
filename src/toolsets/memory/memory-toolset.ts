import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { RunArtifact } from "../../contracts/run-types.js";
import type { Tool, ToolContext, ToolResult } from "../../contracts/tool.js";
import { ConfigError, ToolError } from "../../errors/error-classes.js";
import {
  canRecall,
  isMemoryStore,
  type MemoryEntry,
  type MemoryHit,
  type MemoryStore,
  type RecallSource,
  recallFrom,
} from "../../memory/memory-store.js";
import { rankByTokenOverlap } from "../../memory/rank-by-token-overlap.js";
import { SessionMemoryStore } from "../../memory/session-memory-store.js";
import type { PluginDefinition, PluginFactoryContext } from "../../plugins/plugin-registry.js";
import { defineTool } from "../../tools/define-tool.js";
import type { Toolset } from "../../tools/toolset.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import { okResult } from "../filesystem/tool-result.js";

export const MEMORY_WRITE_MODES = ["disabled", "candidate", "external"] as const;
export type MemoryWriteMode = (typeof MEMORY_WRITE_MODES)[number];

/** The run-artifact kind of a `candidate`-mode write. */
export const MEMORY_CANDIDATE_KIND = "memory_candidate";
/** The file under a run folder's `archive/` that `candidate` writes append to. */
export const MEMORY_CANDIDATES_FILE = "memory-candidates.jsonl";

export interface MemoryToolsetOptions {
  /** Default `candidate`. */
  writeMode?: MemoryWriteMode;
  /**
   * What `recall_memory` searches (its `recall`, else its `retrieve`) and, in `external` mode, where
   * `write_memory` writes (its `write`: the MemoryStore ability, required then). From config: the toolset's
   * `provider`, else the agent's memory plugin. Without one, recall finds only `candidate` writes.
   */
  store?: RecallSource;
  /** Scope of a write or search that names none (default `"default"`; a search without scope spans all). */
  defaultScope?: string;
  /** Default `limit` of `recall_memory` (5) and the most it may ask for (50). */
  defaultLimit?: number;
  maxLimit?: number;
  /** Longest `content` accepted, in characters (default 8000). */
  maxContentChars?: number;
}

function candidateEntries(artifacts: readonly { kind: string; payload: unknown }[]): MemoryEntry[] {
  const entries: MemoryEntry[] = [];
  for (const artifact of artifacts) {
    if (artifact.kind !== MEMORY_CANDIDATE_KIND) continue;
    const payload = artifact.payload as Partial<MemoryEntry> | null;
    if (typeof payload?.content !== "string" || typeof payload.id !== "string") continue;
    entries.push({
      id: payload.id,
      content: payload.content,
      scope: typeof payload.scope === "string" ? payload.scope : "default",
      tags: Array.isArray(payload.tags) ? payload.tags.filter((tag) => typeof tag === "string") : [],
      createdAt: typeof payload.createdAt === "string" ? payload.createdAt : "",
      ...(typeof payload.runId === "string" ? { runId: payload.runId } : {}),
    });
  }
  return entries;
}

/** The memory toolset: its tools, and the write mode a run logs when it starts. */
export interface MemoryToolset extends Toolset {
  readonly writeMode: MemoryWriteMode;
}

/** A memory tool: it carries its toolset's write mode, which `loadAgent` reads for the run-start event. */
export type MemoryTool = Tool & { readonly memoryWriteMode: MemoryWriteMode };

/** The write mode of the first memory tool among an agent's tools, if it has one. */
export function memoryWriteModeOf(tools: Iterable<Tool>): MemoryWriteMode | undefined {
  for (const tool of tools) {
    const mode = (tool as Partial<MemoryTool>).memoryWriteMode;
    if (mode !== undefined) return mode;
  }
  return undefined;
}

/**
 * The memory toolset: `recall_memory(query, scope?, limit?)` through the store's `recall` (or its
 * `retrieve`), and `write_memory(content, scope?, tags?)` by write mode: `disabled` does not offer it,
 * `candidate` (the default) records a `memory_candidate` run artifact (and a line in the run folder's
 * `archive/memory-candidates.jsonl`) and stores nothing, `external` writes through the store's MemoryStore
 * ability.
 */
export function createMemoryToolset(options: MemoryToolsetOptions = {}): MemoryToolset {
  const writeMode = options.writeMode ?? "candidate";
  if (!MEMORY_WRITE_MODES.includes(writeMode)) {
    throw new ConfigError(
      `memory write_mode must be one of ${MEMORY_WRITE_MODES.join(", ")}, not "${writeMode}"`,
    );
  }
  const store = options.store;
  if (store !== undefined && !canRecall(store)) {
    throw new ConfigError("the memory store must implement recall(input, ctx) or retrieve(query, ctx)");
  }
  if (writeMode === "external" && !isMemoryStore(store)) {
    throw new ConfigError('memory write_mode "external" needs a memory store with write(input, ctx)', {
      hint: 'Give a store (createMemoryToolset({store: new SessionMemoryStore()})), or in config "provider": "session_store"',
    });
  }
  const defaultScope = options.defaultScope ?? "default";
  const maxLimit = options.maxLimit ?? 50;
  const defaultLimit = Math.min(options.defaultLimit ?? 5, maxLimit);
  const maxContentChars = options.maxContentChars ?? 8000;

  const recall = defineTool({
    name: "recall_memory",
    description:
      "Search what has been remembered. Returns the best matches for the query, most relevant first" +
      (writeMode === "candidate" ? ", including memory candidates written in this session's runs." : "."),
    inputSchema: z.object({
      query: z.string().min(1).describe("Words to look for, e.g. 'user preferred language'"),
      scope: z.string().min(1).optional().describe("Only memories of this scope (default: all scopes)"),
      limit: z
        .number()
        .int()
        .positive()
        .max(maxLimit)
        .optional()
        .describe(`Most results to return (default ${defaultLimit}, at most ${maxLimit})`),
    }),
    sideEffects: "read",
    concurrencySafe: true,
    execute: async ({ query, scope, limit }, ctx): Promise<ToolResult<{ results: MemoryHit[] }>> => {
      const wanted = Math.min(limit ?? defaultLimit, maxLimit);
      const hits: MemoryHit[] = [];
      if (store !== undefined) {
        const input = { query, ...(scope === undefined ? {} : { scope }), limit: wanted };
        hits.push(...(await recallFrom(store, input, ctx)));
      }
      if (writeMode === "candidate") {
        const byId = new Map<string, MemoryEntry>();
        for (const entry of candidateEntries([...ctx.sessionArtifacts, ...ctx.artifacts]))
          byId.set(entry.id, entry);
        const ranked = rankByTokenOverlap([...byId.values()], query, { scope, limit: wanted });
        hits.push(...ranked.map((hit) => ({ ...hit, source: "candidate" as const })));
      }
      hits.sort((a, b) => b.score - a.score);
      const results = hits.slice(0, wanted);
      return okResult(
        results.length === 0
          ? `No memories match "${query}"`
          : `${results.length} memor${results.length === 1 ? "y matches" : "ies match"} "${query}"`,
        { results },
      );
    },
  }) as Tool;

  const tools: MemoryTool[] = [Object.assign(recall, { memoryWriteMode: writeMode })];
  if (writeMode !== "disabled") {
    const write = defineTool({
      name: "write_memory",
      description:
        writeMode === "candidate"
          ? "Propose something worth remembering. It is recorded as a memory candidate for review."
          : "Remember something for later runs; recall_memory finds it.",
      inputSchema: z.object({
        content: z
          .string()
          .min(1)
          .max(maxContentChars)
          .describe("What to remember, as a self-contained sentence"),
        scope: z.string().min(1).optional().describe(`Where it applies (default "${defaultScope}")`),
        tags: z.array(z.string().min(1)).max(20).optional().describe("Keywords that help find it later"),
      }),
      sideEffects: writeMode === "external" ? "write" : "none",
      durableIdempotent: writeMode !== "external",
      execute: async (
        { content, scope, tags },
        ctx,
      ): Promise<ToolResult<{ id: string; mode: MemoryWriteMode }>> => {
        const input = { content, scope: scope ?? defaultScope, tags: tags ?? [] };
        if (writeMode === "candidate") {
          const entry = writeCandidate(ctx, input);
          return okResult(`Recorded memory candidate ${entry.id} (scope ${entry.scope}) for review`, {
            id: entry.id,
            mode: writeMode,
          });
        }
        const written = await (store as MemoryStore).write(input, ctx);
        if (typeof written?.id !== "string") throw new ToolError("the memory store's write returned no id");
        return okResult(`Stored memory ${written.id} (scope ${input.scope})`, {
          id: written.id,
          mode: writeMode,
        });
      },
    }) as Tool;
    tools.push(Object.assign(write, { memoryWriteMode: writeMode }));
  }
  return { kind: "toolset", name: "memory", writeMode, tools: () => tools };
}

/** A candidate write: a run artifact, and a line in the run folder's archive when the run keeps one. */
function writeCandidate(
  ctx: ToolContext,
  input: { content: string; scope: string; tags: string[] },
): MemoryEntry {
  const entry: MemoryEntry = {
    id: `cand_${randomUUID()}`,
    content: input.content,
    scope: input.scope,
    tags: [...input.tags],
    runId: ctx.runId,
    createdAt: new Date().toISOString(),
  };
  const artifact: RunArtifact = {
    name: `memory_candidate:${entry.id}`,
    kind: MEMORY_CANDIDATE_KIND,
    payload: entry,
    metadata: { toolCallId: ctx.toolCallId },
  };
  ctx.artifacts.push(artifact);
  ctx.runFolder?.appendArchive(MEMORY_CANDIDATES_FILE, `${JSON.stringify(entry)}\n`);
  return entry;
}

const memoryToolsetConfig = builtOnFirstUse(() =>
  z.object({
    write_mode: z.enum(MEMORY_WRITE_MODES).optional(),
    /**
     * The toolset's own MemoryStore: `"session_store"`, `{"type": "session_store", "config": {"max_entries"}}`,
     * `{"impl": "…#Export"}` or an object. Absent: the agent's memory plugin.
     */
    provider: z.unknown().optional(),
    default_scope: z.string().min(1).optional(),
    default_limit: z.number().int().positive().optional(),
    max_limit: z.number().int().positive().optional(),
    max_content_chars: z.number().int().positive().optional(),
  }),
);

const STORE_HINT =
  'A memory store has write({content, scope, tags}, ctx) → {id} and recall({query, scope, limit}, ctx) → hits; use "session_store" for the builtin';

async function loadProvider(ref: unknown, context: PluginFactoryContext): Promise<RecallSource | undefined> {
  if (ref === undefined || ref === null) return undefined;
  if (isMemoryStore(ref) && canRecall(ref)) return ref;
  const typed =
    typeof ref === "string" ? { type: ref } : (ref as { type?: unknown; impl?: unknown; config?: unknown });
  if (typed.type === "session_store") {
    const config = (typed.config ?? {}) as { max_entries?: unknown };
    const maxEntries = config.max_entries;
    if (
      maxEntries !== undefined &&
      (typeof maxEntries !== "number" || !Number.isInteger(maxEntries) || maxEntries <= 0)
    ) {
      throw new ConfigError(`memory provider session_store: max_entries must be a positive integer`);
    }
    return new SessionMemoryStore(maxEntries === undefined ? {} : { maxEntries });
  }
  if (typeof typed.impl === "string") {
    const loaded = await context.load("memory", ref);
    if (!isMemoryStore(loaded) || !canRecall(loaded)) {
      throw new ConfigError(
        `memory provider ${typed.impl} must implement write(input, ctx) and recall(input, ctx)`,
        {
          hint: STORE_HINT,
        },
      );
    }
    return loaded;
  }
  throw new ConfigError(`unknown memory provider ${JSON.stringify(ref)}`, {
    hint: 'Use "session_store", {"impl": "./my-memory.js#MyStore"}, or a store object',
  });
}

async function fromConfig(config: Record<string, unknown>, context: PluginFactoryContext): Promise<Toolset> {
  const parsed = memoryToolsetConfig().parse(config);
  const writeMode = parsed.write_mode ?? "candidate";
  const options: MemoryToolsetOptions = { writeMode };
  // The toolset's own provider, else the agent's memory plugin ("the memory plugin's MemoryStore ability").
  const agentMemory = context.agent?.memory;
  const store =
    (await loadProvider(parsed.provider, context)) ?? (canRecall(agentMemory) ? agentMemory : undefined);
  if (writeMode === "external" && !isMemoryStore(store)) {
    const plugin = memoryPluginName(agentMemory);
    throw new ConfigError(
      `memory write_mode "external" needs a memory store: ${plugin === undefined ? "the agent has no memory plugin" : `the agent's memory plugin (${plugin}) has no MemoryStore ability (write)`} and no "provider" is given`,
      {
        hint: 'Add "provider": "session_store" (the builtin, kept in the session store), "provider": {"impl": "./my-memory.js#MyStore"}, or use a memory plugin that implements write(input, ctx)',
      },
    );
  }
  if (store !== undefined) options.store = store;
  if (parsed.default_scope !== undefined) options.defaultScope = parsed.default_scope;
  if (parsed.default_limit !== undefined) options.defaultLimit = parsed.default_limit;
  if (parsed.max_limit !== undefined) options.maxLimit = parsed.max_limit;
  if (parsed.max_content_chars !== undefined) options.maxContentChars = parsed.max_content_chars;
  return createMemoryToolset(options);
}

function memoryPluginName(memory: unknown): string | undefined {
  if (typeof memory !== "object" || memory === null) return undefined;
  return (memory as { constructor?: { name?: string } }).constructor?.name ?? "memory";
}

/**
 * `{"type": "memory", "config": {"write_mode": "disabled" | "candidate" | "external", "provider": …}}`: the
 * memory toolset over the `provider` store or the agent's memory plugin.
 */
export const memoryToolsetPlugin: PluginDefinition<Toolset> = {
  kind: "tool",
  type: "memory",
  get configSchema() {
    return memoryToolsetConfig();
  },
  create: fromConfig,
};

/** The other name configs use for the same toolset (`memory_tools`). */
export const memoryToolsToolsetPlugin: PluginDefinition<Toolset> = {
  kind: "tool",
  type: "memory_tools",
  // A getter, not a spread of the other definition: spreading would build the schema when this module loads.
  get configSchema() {
    return memoryToolsetConfig();
  },
  create: fromConfig,
};
