import { z } from "zod";
import { DEFAULT_EXECUTION_SPEC, type Tool } from "../../contracts/tool.js";
import { PermanentToolError } from "../../errors/error-classes.js";
import { currentHostBridge } from "../../models/providers/host/host-bridge.js";
import type { PluginDefinition } from "../../plugins/plugin-registry.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";

const hostKnowledgeToolConfig = builtOnFirstUse(() =>
  z.object({
    /** The host's knowledge base; the run's first granted one when absent. */
    kb_id: z.string().min(1).optional(),
    top_k: z.number().int().min(1).max(100).default(5),
    description: z.string().default("Search the knowledge base for passages about a query"),
  }),
);

const SCHEMA = {
  type: "object",
  properties: { query: { type: "string", description: "What to look for, in a few words" } },
  required: ["query"],
} as const;

/**
 * `{"id": "knowledge_search", "type": "host_knowledge", "config": {"kb_id": "…", "top_k": 5}}`: searches a
 * knowledge base of the host the agent runs inside, through the run's API proxy (so the host checks the run's
 * grant and audits the call). A runner whose agent has one asks for `knowledge_bases: ["retrieve"]`. Outside a
 * host run it fails without being retried.
 */
export const hostKnowledgeToolPlugin: PluginDefinition<Tool> = {
  kind: "tool",
  type: "host_knowledge",
  get configSchema() {
    return hostKnowledgeToolConfig();
  },
  create: (config, context) => {
    const parsed = hostKnowledgeToolConfig().parse(config);
    const name = context.id ?? "knowledge_search";
    return {
      name,
      description: parsed.description,
      schema: () => SCHEMA,
      executionSpec: () => DEFAULT_EXECUTION_SPEC,
      invoke: async (params) => {
        const bridge = currentHostBridge();
        if (!bridge?.retrieveKnowledge)
          throw new PermanentToolError(`${name} can only search knowledge inside a host run`);
        const query = typeof params.query === "string" ? params.query : "";
        if (query.trim().length === 0) throw new PermanentToolError(`${name} needs a query`);
        const results = await bridge.retrieveKnowledge(parsed.kb_id, query, { topK: parsed.top_k });
        // The passages' text, source id and score: what a model needs to quote and cite them.
        return results.map((entry) => {
          const { id, content, score, metadata } = entry as {
            id?: unknown;
            content?: { text?: unknown }[];
            score?: unknown;
            metadata?: unknown;
          };
          const text = (content ?? [])
            .map((part) => (typeof part.text === "string" ? part.text : ""))
            .join("\n");
          return { id, text, score, metadata };
        });
      },
    };
  },
};
