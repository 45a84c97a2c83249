import { z } from "zod";
import type { RunContext } from "../contracts/tool.js";
import { PluginConfigError, PluginLoadError } from "../errors/error-classes.js";
import { importOptionalPackage } from "../errors/import-optional-package.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import type { Memory } from "./memory.js";

/** The config of the `mem0` memory. */
export const mem0MemoryConfigSchema = builtOnFirstUse(() =>
  z.object({
    collection_name: z.string().min(1).default("keel_memory"),
    search_limit: z.number().int().min(1).default(5),
    api_key_env: z.string().min(1).default("MEM0_API_KEY"),
    view_key: z.string().min(1).default("memories"),
  }),
);

/** The part of the `mem0ai` client (`MemoryClient`) Keel uses. */
export interface Mem0Client {
  add(
    messages: { role: "user" | "assistant"; content: string }[],
    options: Record<string, unknown>,
  ): Promise<unknown>;
  search(query: string, options: Record<string, unknown>): Promise<unknown>;
}

/** Options of {@link Mem0Memory}. */
export interface Mem0MemoryOptions {
  client: Mem0Client;
  /** The mem0 `user_id` every memory is stored and searched under. */
  collectionName?: string;
  searchLimit?: number;
  /** `ctx.memoryView` key the memories found for the run's input are injected under. */
  viewKey?: string;
}

/** The npm package the `mem0` memory needs. */
export const MEM0_PACKAGE = "mem0ai";

/**
 * Long-term memory in mem0: inject searches with the run's input, writeback adds the exchange, retrieve
 * searches. Memories live under the mem0 user id `collectionName`; the Keel session, agent and run ids go
 * along as metadata.
 */
export class Mem0Memory implements Memory {
  readonly client: Mem0Client;
  readonly collectionName: string;
  readonly searchLimit: number;
  readonly viewKey: string;

  constructor(options: Mem0MemoryOptions) {
    this.client = options.client;
    this.collectionName = options.collectionName ?? "keel_memory";
    this.searchLimit = options.searchLimit ?? 5;
    this.viewKey = options.viewKey ?? "memories";
  }

  /**
   * Import `mem0ai` and build its client; a missing package is a `PluginLoadError` naming it. `importModule`
   * replaces the import (tests, bundlers that resolve the package differently).
   */
  static async create(
    config: z.output<ReturnType<typeof mem0MemoryConfigSchema>>,
    importModule: () => Promise<unknown> = importMem0,
  ): Promise<Mem0Memory> {
    const module = await importModule();
    const ClientClass = findClientClass(module);
    if (!ClientClass) {
      throw new PluginLoadError(`memory "mem0": the ${MEM0_PACKAGE} package exports no MemoryClient`, {
        hint: `Install a current version: npm install ${MEM0_PACKAGE}@latest`,
      });
    }
    const apiKey = process.env[config.api_key_env];
    if (!apiKey) {
      throw new PluginConfigError(
        `memory "mem0": the environment variable ${config.api_key_env} is not set`,
        {
          hint: `Set ${config.api_key_env} to your mem0 API key, or name another variable in "api_key_env"`,
        },
      );
    }
    return new Mem0Memory({
      client: new ClientClass({ apiKey }),
      collectionName: config.collection_name,
      searchLimit: config.search_limit,
      viewKey: config.view_key,
    });
  }

  async inject(ctx: RunContext): Promise<void> {
    ctx.memoryView[this.viewKey] = ctx.inputText ? await this.search(ctx.inputText) : [];
  }

  async writeback(ctx: RunContext): Promise<void> {
    const messages: { role: "user" | "assistant"; content: string }[] = [];
    if (ctx.inputText) messages.push({ role: "user", content: ctx.inputText });
    const output = ctx.scratch.finalOutput;
    if (output !== undefined && output !== null) {
      messages.push({
        role: "assistant",
        content: typeof output === "string" ? output : JSON.stringify(output),
      });
    }
    if (messages.length === 0) return;
    await this.client.add(messages, {
      user_id: this.collectionName,
      metadata: { sessionId: ctx.sessionId, agentId: ctx.agentId, runId: ctx.runId },
    });
  }

  retrieve(query: string, _ctx: RunContext): Promise<Record<string, unknown>[]> {
    return this.search(query);
  }

  private async search(query: string): Promise<Record<string, unknown>[]> {
    const response = await this.client.search(query, {
      user_id: this.collectionName,
      limit: this.searchLimit,
    });
    // Older clients answer with a list, newer ones with `{results: [...]}`.
    const list = Array.isArray(response) ? response : (response as { results?: unknown } | null)?.results;
    if (!Array.isArray(list)) return [];
    return list.filter((item): item is Record<string, unknown> => typeof item === "object" && item !== null);
  }
}

type Mem0ClientClass = new (options: { apiKey: string }) => Mem0Client;

function importMem0(): Promise<unknown> {
  return importOptionalPackage(MEM0_PACKAGE, { neededBy: 'memory "mem0"' });
}

function findClientClass(module: unknown): Mem0ClientClass | undefined {
  const candidates = module as { default?: unknown; MemoryClient?: unknown } | null;
  // ESM builds export the client as default; CommonJS interop may nest it one level deeper.
  for (const candidate of [
    candidates?.default,
    candidates?.MemoryClient,
    (candidates?.default as { default?: unknown } | undefined)?.default,
  ]) {
    if (typeof candidate === "function") return candidate as Mem0ClientClass;
  }
  return undefined;
}
