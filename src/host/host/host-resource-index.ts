import type { LanguageModel } from "../../contracts/language-model.js";
import type { KnowledgeBase, RerankModel } from "./knowledge-base.js";
import type { HostFile } from "./resource-answers.js";
import type { HostTool } from "./run-api-proxy.js";
import type { HostResourceIndex } from "./run-session.js";

/** What a host offers runners, by id, as the grant and the run context read it. */
export function hostResourceIndex(offered: {
  models: ReadonlyMap<string, LanguageModel>;
  tools: ReadonlyMap<string, HostTool>;
  rerankModels: ReadonlyMap<string, RerankModel>;
  knowledgeBases: ReadonlyMap<string, KnowledgeBase>;
  files: ReadonlyMap<string, HostFile>;
}): HostResourceIndex {
  const { models, tools, rerankModels, knowledgeBases, files } = offered;
  return {
    models: new Map<string, { model_type?: string; provider?: string }>([
      ...[...models].map(([id, model]) => [id, { provider: model.provider }] as const),
      ...[...rerankModels].map(
        ([id, model]) =>
          [id, { model_type: "rerank", ...(model.provider ? { provider: model.provider } : {}) }] as const,
      ),
    ]),
    tools: new Map(
      [...tools].map(([name, tool]) => [
        name,
        {
          ...(tool.description ? { description: tool.description } : {}),
          ...(tool.parameters ? { parameters: tool.parameters } : {}),
        },
      ]),
    ),
    knowledgeBases: new Map(
      [...knowledgeBases].map(([id, base]) => [
        id,
        { name: base.name, ...(base.type ? { type: base.type } : {}) },
      ]),
    ),
    files: new Map(
      [...files].map(([id, file]) => [
        id,
        {
          kind: file.kind,
          ...(file.name ? { name: file.name } : {}),
          ...(file.mimeType ? { mime_type: file.mimeType } : {}),
        },
      ]),
    ),
  };
}
