import { createHash } from "node:crypto";
import type { ActionChannel } from "../transport/action-channel.js";
import { FileTransferError, receiveFiles, sendFile } from "../transport/file-transfer.js";
import { AgentApiError, AGENT_API_ERROR_CODES as CODES } from "../wire/api-error.js";
import { type KnowledgeBase, MAX_RERANK_DOCUMENTS, type RerankModel } from "./knowledge-base.js";

/**
 * The answers to the proxy calls that reach a host resource's backend — knowledge retrieval, reranking and file
 * reads. They run after the proxy's checks, so the resource is granted to the run; what is left is the request's
 * own arguments and the backend's answer.
 */

/** A file the host lets runners read: a config file of a binding, or a knowledge base's source file. */
export interface HostFile {
  /** Which of the manifest's `files` permissions a runner needs to be granted it. */
  kind: "config" | "knowledge";
  name?: string;
  mimeType?: string;
  read(): Promise<Uint8Array>;
}

/** The bytes of a file the other end sent on `channel` under `fileKey`; a torn or unknown one is refused. */
export function takeSentFile(channel: ActionChannel, fileKey: string): Uint8Array {
  try {
    return receiveFiles(channel).take(fileKey);
  } catch (error) {
    if (!(error instanceof FileTransferError)) throw error;
    throw new AgentApiError(CODES.INVALID_ARGUMENT, error.message, { details: { code: error.code } });
  }
}

/** The largest file the host sends a runner; the runner's receiver holds it in memory. */
export const MAX_HOST_FILE_BYTES = 10 * 1024 * 1024;

/** `top_k` as given, at most `max`; `fallback` when absent; anything but a positive integer is refused. */
function topKOf(value: unknown, bounds: { fallback: number; max: number }): number {
  if (value === undefined || value === null) return bounds.fallback;
  if (!Number.isSafeInteger(value) || (value as number) <= 0)
    throw new AgentApiError(CODES.INVALID_ARGUMENT, "top_k must be a positive integer");
  return Math.min(value as number, bounds.max);
}

/** `retrieve_knowledge_base {kb_id, query_text, top_k = 5 (≤ 100), filters}` → `{results}`. */
export async function retrieveKnowledge(
  knowledgeBases: ReadonlyMap<string, KnowledgeBase>,
  data: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const kbId = String(data.kb_id);
  const knowledgeBase = knowledgeBases.get(kbId);
  // In the grant (an authorize hook may add ids) but not a base this host serves.
  if (!knowledgeBase) throw new AgentApiError(CODES.NOT_FOUND, `knowledge base ${kbId} is not served here`);
  if (typeof data.query_text !== "string")
    throw new AgentApiError(CODES.INVALID_ARGUMENT, "query_text must be a string");
  const filters = data.filters ?? {};
  if (typeof filters !== "object" || Array.isArray(filters))
    throw new AgentApiError(CODES.INVALID_ARGUMENT, "filters must be an object");
  const topK = topKOf(data.top_k, { fallback: 5, max: 100 });
  const results = await knowledgeBase.retrieve(data.query_text, {
    topK,
    filters: filters as Record<string, unknown>,
    signal,
  });
  return { results: results.slice(0, topK) };
}

/** `invoke_rerank {rerank_model_uuid, query, documents (≤ 64), top_k}` → `{results: [{index, relevance_score}]}`. */
export async function rerankDocuments(
  rerankModels: ReadonlyMap<string, RerankModel>,
  data: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const modelId = String(data.rerank_model_uuid);
  const model = rerankModels.get(modelId);
  if (!model) throw new AgentApiError(CODES.INVALID_ARGUMENT, `model ${modelId} is not a rerank model`);
  const { query, documents } = data;
  if (typeof query !== "string") throw new AgentApiError(CODES.INVALID_ARGUMENT, "query must be a string");
  if (!Array.isArray(documents) || !documents.every((document) => typeof document === "string"))
    throw new AgentApiError(CODES.INVALID_ARGUMENT, "documents must be a list of strings");
  if (documents.length > MAX_RERANK_DOCUMENTS)
    throw new AgentApiError(CODES.INVALID_ARGUMENT, `at most ${MAX_RERANK_DOCUMENTS} documents per rerank`);
  const topK = topKOf(data.top_k, { fallback: documents.length, max: documents.length });
  const scored = await model.rerank(query, documents as string[], { signal });
  const results = scored
    .filter(
      (result) => Number.isSafeInteger(result.index) && result.index >= 0 && result.index < documents.length,
    )
    .sort((a, b) => b.relevance_score - a.relevance_score)
    .slice(0, topK)
    .map(({ index, relevance_score }) => ({ index, relevance_score }));
  return { results };
}

/**
 * `get_file {file_id}`: sends the file to the runner in `__file_chunk` pieces on the run's own channel, then
 * answers `{file_key, file_name, mime_type, size_bytes, sha256}` — the runner takes the bytes it received under
 * that key.
 */
export async function sendHostFile(
  files: ReadonlyMap<string, HostFile>,
  data: Record<string, unknown>,
  call: { channel: ActionChannel; signal: AbortSignal },
): Promise<Record<string, unknown>> {
  const { channel, signal } = call;
  const fileId = String(data.file_id);
  const file = files.get(fileId);
  if (!file) throw new AgentApiError(CODES.NOT_FOUND, `file ${fileId} is not served here`);
  const bytes = await file.read();
  if (bytes.length > MAX_HOST_FILE_BYTES)
    throw new AgentApiError(CODES.PAYLOAD_TOO_LARGE, `file ${fileId} is over ${MAX_HOST_FILE_BYTES} bytes`);
  const fileKey = await sendFile(channel, bytes, { signal });
  return {
    file_key: fileKey,
    file_name: file.name ?? null,
    mime_type: file.mimeType ?? null,
    size_bytes: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  };
}
