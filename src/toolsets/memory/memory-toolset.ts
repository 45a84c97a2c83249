import { randomUUID } from "node:crypto";
import { z } from "zod";
import { ConfigError, ToolError } from "../../errors/error-classes.js";
import type { PluginDefinition, PluginFactoryContext } from "../../plugins/plugin-registry.js";
import type { RunArtifact } from "../../runtime/run-types.js";
import { defineTool } from "../../tools/define-tool.js";
import type { Tool, ToolContext, ToolResult } from "../../tools/tool.js";
import type { Toolset } from "../../tools/toolset.js";
import { okResult } from "../filesystem/tool-result.js";
import {
  isMemoryProvider,
  type MemoryEntry,
  type MemoryHit,
  type MemoryProvider,
  rankByTokenOverlap,
  SessionStoreMemoryProvider,
} from "./memory-provider.js";

export const MEMORY_WRITE_MODES = ["disabled", "candidate", "external"] as const;
export type MemoryWriteMode = (typeof MEMORY_WRITE_MODES)[number];

/** The run-artifact kind of a `candidate`-mode write. */
export const MEMORY_CANDIDATE_KIND = "memory_candidate";
/** The code of the tool error `write_memory` raises in `disabled` mode. */
export const MEMORY_WRITE_DISABLED_CODE = "memory.write_disabled";

/** `write_memory` was refused because the toolset's write mode is `disabled` (SB-4). The model sees it. */
export class MemoryWriteDisabledError extends ToolError {
  constructor() {
    super(
      'write_memory is disabled for this agent (memory write_mode is "disabled"); nothing was stored. ' +
        "recall_memory still works.",
      { code: MEMORY_WRITE_DISABLED_CODE },
    );
    this.name = "MemoryWriteDisabledError";
  }
}

export interface MemoryToolsetOptions {
  /** Default `candidate`. */
  writeMode?: MemoryWriteMode;
  /**
   * Where `external` writes go and what `recall_memory` searches. Default in `external` mode: a
   * {@link SessionStoreMemoryProvider}. In `candidate` mode recall also searches it when given.
   */
  provider?: MemoryProvider;
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

/**
 * The memory toolset (SB-1, SB-4): `recall_memory(query, scope?, limit?)` and `write_memory(content, scope?,
 * tags?)`. Write modes: `disabled` (write_memory refuses with {@link MemoryWriteDisabledError}), `candidate` (the
 * default: the write becomes a run artifact of kind `memory_candidate` for review, nothing is stored), `external`
 * (through a {@link MemoryProvider}).
 */
export function createMemoryToolset(options: MemoryToolsetOptions = {}): Toolset {
  const writeMode = options.writeMode ?? "candidate";
  if (!MEMORY_WRITE_MODES.includes(writeMode)) {
    throw new ConfigError(
      `memory write_mode must be one of ${MEMORY_WRITE_MODES.join(", ")}, not "${writeMode}"`,
    );
  }
  if (options.provider !== undefined && !isMemoryProvider(options.provider)) {
    throw new ConfigError("the memory provider must implement write(input, ctx) and search(input, ctx)");
  }
  const provider =
    options.provider ?? (writeMode === "external" ? new SessionStoreMemoryProvider() : undefined);
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
      if (provider !== undefined) {
        const found = await provider.search(
          { query, ...(scope === undefined ? {} : { scope }), limit: wanted },
          ctx,
        );
        if (!Array.isArray(found)) throw new ToolError("the memory provider's search returned no array");
        hits.push(...found.map((hit) => ({ ...hit, source: hit.source ?? ("provider" as const) })));
      }
      if (writeMode === "candidate") {
        const byId = new Map<string, MemoryEntry>();
        for (const entry of candidateEntries([...ctx.sessionArtifacts, ...ctx.artifacts]))
          byId.set(entry.id, entry);
        const pool = [...byId.values()];
        const ranked = rankByTokenOverlap(pool, query, { scope, limit: wanted });
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

  const write = defineTool({
    name: "write_memory",
    description:
      writeMode === "disabled"
        ? "Writing memories is disabled for this agent; calls are refused."
        : writeMode === "candidate"
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
      if (writeMode === "disabled") throw new MemoryWriteDisabledError();
      const input = { content, scope: scope ?? defaultScope, tags: tags ?? [] };
      if (writeMode === "candidate") {
        const entry = writeCandidate(ctx, input);
        return okResult(`Recorded memory candidate ${entry.id} (scope ${entry.scope}) for review`, {
          id: entry.id,
          mode: writeMode,
        });
      }
      const written = await provider!.write(input, ctx);
      if (typeof written?.id !== "string") throw new ToolError("the memory provider's write returned no id");
      return okResult(`Stored memory ${written.id} (scope ${input.scope})`, {
        id: written.id,
        mode: writeMode,
      });
    },
  }) as Tool;

  const tools = [recall, write];
  return { kind: "toolset", name: "memory", tools: () => tools };
}

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
  return entry;
}

const MEMORY_CONFIG = z.object({
  write_mode: z.enum(MEMORY_WRITE_MODES).optional(),
  /** `"session_store"`, `{"type": "session_store", "config": {"max_entries"}}`, `{"impl": "…#Export"}` or an object. */
  provider: z.unknown().optional(),
  default_scope: z.string().min(1).optional(),
  default_limit: z.number().int().positive().optional(),
  max_limit: z.number().int().positive().optional(),
  max_content_chars: z.number().int().positive().optional(),
});

async function loadProvider(
  ref: unknown,
  context: PluginFactoryContext,
): Promise<MemoryProvider | undefined> {
  if (ref === undefined || ref === null) return undefined;
  if (isMemoryProvider(ref)) return ref;
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
    return new SessionStoreMemoryProvider(maxEntries === undefined ? {} : { maxEntries });
  }
  if (typeof typed.impl === "string") {
    const loaded = await context.load("memory", ref);
    if (!isMemoryProvider(loaded)) {
      throw new ConfigError(
        `memory provider ${typed.impl} must implement write(input, ctx) and search(input, ctx)`,
        {
          hint: "A MemoryProvider has write({content, scope, tags}, ctx) → {id} and search({query, scope, limit}, ctx) → hits",
        },
      );
    }
    return loaded;
  }
  throw new ConfigError(`unknown memory provider ${JSON.stringify(ref)}`, {
    hint: 'Use "session_store", {"impl": "./my-memory.js#MyProvider"}, or a provider object',
  });
}

async function fromConfig(config: Record<string, unknown>, context: PluginFactoryContext): Promise<Toolset> {
  const parsed = MEMORY_CONFIG.parse(config);
  const options: MemoryToolsetOptions = {};
  if (parsed.write_mode !== undefined) options.writeMode = parsed.write_mode;
  const provider = await loadProvider(parsed.provider, context);
  if (provider !== undefined) options.provider = provider;
  if (parsed.default_scope !== undefined) options.defaultScope = parsed.default_scope;
  if (parsed.default_limit !== undefined) options.defaultLimit = parsed.default_limit;
  if (parsed.max_limit !== undefined) options.maxLimit = parsed.max_limit;
  if (parsed.max_content_chars !== undefined) options.maxContentChars = parsed.max_content_chars;
  return createMemoryToolset(options);
}

/** `{"type": "memory", "config": {"write_mode": "disabled" | "candidate" | "external", "provider": …}}`. */
export const memoryToolsetPlugin: PluginDefinition<Toolset> = {
  kind: "tool",
  type: "memory",
  configSchema: MEMORY_CONFIG,
  create: fromConfig,
};

/** SPEC SB-1's name for the same toolset. */
export const memoryToolsToolsetPlugin: PluginDefinition<Toolset> = {
  ...memoryToolsetPlugin,
  type: "memory_tools",
};
