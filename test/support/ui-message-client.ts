import {
  parseJsonEventStream as parseV6,
  readUIMessageStream,
  type UIMessage,
  type UIMessageChunk,
  uiMessageChunkSchema as v6Schema,
} from "ai";
import { parseJsonEventStream as parseV5, uiMessageChunkSchema as v5Schema } from "ai5";
import { z } from "zod";
import { defineTool, Runtime } from "../../src/index.js";
import { type ScriptStep, scriptedModel } from "../../src/testing/index.js";
import { addTool } from "./harness.js";

/** A tool that must be approved before it runs. */
export const wipeTool = defineTool({
  name: "wipe",
  description: "Wipe a path",
  inputSchema: z.object({ path: z.string() }),
  approvalMode: "always",
  execute: ({ path }: { path: string }) => `wiped ${path}`,
});

/** A runtime with one agent `a` (tools `add` and `wipe`) on a scripted model. */
export async function chatRuntime(script: readonly ScriptStep[], tools: unknown[] = [addTool, wipeTool]) {
  return Runtime.fromDict({
    agents: [{ id: "a", name: "Agent A", tools, llm: scriptedModel(script) }],
  } as never);
}

/**
 * A response body read as the AI SDK client reads it: SSE frames parsed by the client's own parser, each chunk
 * validated by the given major's `uiMessageChunkSchema`; fails on any chunk the client would refuse.
 */
export async function readChunks(response: Response, major: "v5" | "v6" = "v6"): Promise<UIMessageChunk[]> {
  const text = await response.text();
  if (!text.endsWith("data: [DONE]\n\n"))
    throw new Error(`stream does not end with [DONE]: ${text.slice(-80)}`);
  const stream = new Response(text).body as ReadableStream<Uint8Array>;
  const parsed =
    major === "v5"
      ? parseV5({ stream, schema: v5Schema as never })
      : parseV6({ stream, schema: v6Schema as never });
  const chunks: UIMessageChunk[] = [];
  for await (const result of parsed as AsyncIterable<{
    success: boolean;
    value?: unknown;
    error?: unknown;
  }>) {
    if (!result.success) throw new Error(`the ${major} client refuses a chunk: ${String(result.error)}`);
    chunks.push(result.value as UIMessageChunk);
  }
  return chunks;
}

/**
 * The assistant message the client builds from chunks (continuing `message` when given), with the errors the
 * client reported: an ordering mistake shows there as well as a stream's `error` chunk.
 */
export async function messageOf(
  chunks: readonly UIMessageChunk[],
  message?: UIMessage,
): Promise<{ message: UIMessage; errors: string[] }> {
  const errors: string[] = [];
  let last: UIMessage | undefined;
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const read = readUIMessageStream({
    stream,
    ...(message === undefined ? {} : { message }),
    onError: (error) => errors.push(error instanceof Error ? error.message : String(error)),
  });
  for await (const snapshot of read) last = snapshot;
  if (last === undefined) throw new Error("the client built no message");
  return { message: structuredClone(last), errors };
}

/** A chat request as `DefaultChatTransport` sends it. */
export function chatPost(body: Record<string, unknown>, path = "/chat"): Request {
  return new Request(`http://keel.test${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

export function userMessage(text: string, id = `u-${text.length}`): UIMessage {
  return { id, role: "user", parts: [{ type: "text", text }] };
}

/** What `addToolApprovalResponse` does to the message holding the approval (as in the `ai` source). */
export function answerApproval(
  message: UIMessage,
  answer: { id: string; approved: boolean; reason?: string },
): UIMessage {
  const { id: approvalId, approved, reason } = answer;
  return {
    ...message,
    parts: message.parts.map((part) => {
      const tool = part as { state?: string; approval?: { id: string } };
      return tool.state === "approval-requested" && tool.approval?.id === approvalId
        ? ({
            ...part,
            state: "approval-responded",
            approval: { ...tool.approval, id: approvalId, approved, reason },
          } as never)
        : part;
    }),
  };
}
