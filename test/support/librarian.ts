import { appConfigSchema } from "../../src/config/app-config-schema.js";
import type { KeelConfig } from "../../src/config/keel-config.js";
import {
  type LanguageModel,
  MODEL_SPECIFICATION_VERSION,
  type ModelRequest,
  type ModelStreamPart,
} from "../../src/contracts/language-model.js";
import {
  createInMemoryHostStores,
  createInMemoryTransportPair,
  KeelHost,
  type KnowledgeBase,
  serveKeelRunner,
} from "../../src/host/index.js";
import { Runtime } from "../../src/runtime/runtime.js";
import { collect, message } from "./host-scenario.js";

/** Searches the knowledge base with the user's words, then answers with what the search returned. */
class LibrarianModel implements LanguageModel {
  readonly specificationVersion = MODEL_SPECIFICATION_VERSION;
  readonly provider = "test";
  readonly modelId = "librarian";
  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const last = request.messages.at(-1);
    const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
    if (last?.role === "tool") {
      yield { type: "text-delta", text: `Found: ${text}` };
      yield { type: "finish", stopReason: "end_turn" };
      return;
    }
    yield { type: "tool-call", id: "search-1", name: "knowledge_search", arguments: { query: text } };
    yield { type: "finish", stopReason: "tool_use" };
  }
}

/**
 * A Keel agent with a `host_knowledge` tool (top 1), served as a runner to a host that serves `knowledgeBase`,
 * asked `question` once: the manifest the host saw, the run's results and the host's stores. `cleanups` gets
 * what closes it all.
 */
export async function askLibrarian(
  knowledgeBase: KnowledgeBase,
  question: string,
  cleanups: (() => Promise<void> | void)[],
) {
  const config: KeelConfig = {
    agents: [
      {
        id: "librarian",
        name: "Librarian",
        llm: { provider: "host" },
        tools: [{ id: "knowledge_search", type: "host_knowledge", config: { top_k: 1 } }],
      },
    ],
  };
  const runtime = await Runtime.fromDict(config);
  const [hostEnd, runnerEnd] = createInMemoryTransportPair();
  serveKeelRunner({ runtime, agents: appConfigSchema().parse(config).agents, transport: runnerEnd });
  const stores = createInMemoryHostStores();
  const host = new KeelHost({
    stores,
    models: { librarian: new LibrarianModel() },
    knowledgeBases: [knowledgeBase],
  });
  cleanups.push(async () => {
    await host.close();
    await runtime.close();
  });
  const attached = await host.attach(hostEnd);
  const results = await collect(
    host.run(message(question), {
      binding_id: "b",
      runner_id: "plugin:keel/agents/librarian",
      resource_policy: { allowed_model_uuids: ["librarian"], allowed_kb_uuids: [knowledgeBase.id] },
    }),
  );
  return { manifest: attached.runners[0]!.manifest, results, stores };
}
