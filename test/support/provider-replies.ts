import { type Reply, sseText, streamReply } from "./fake-model-server.js";
import { openAIIssues } from "./openai-openapi.js";

/** A Messages API content block for {@link anthropicTurn}. */
export type AnthropicTurnBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** One streamed Anthropic answer with these blocks, in the event sequence the Messages API sends. */
export function anthropicTurn(turn: {
  id: string;
  blocks: AnthropicTurnBlock[];
  stopReason: string;
  usage: Record<string, number>;
  model?: string;
}): Reply {
  const { id, blocks, stopReason, usage } = turn;
  const events: [string, unknown][] = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          content: [],
          model: turn.model ?? "claude-sonnet-4-6",
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      },
    ],
  ];
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      events.push([
        "content_block_start",
        { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      ]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } },
      ]);
    } else if (block.type === "thinking") {
      events.push([
        "content_block_start",
        {
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        },
      ]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: block.thinking } },
      ]);
      events.push([
        "content_block_delta",
        {
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: block.signature },
        },
      ]);
    } else {
      events.push([
        "content_block_start",
        {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        },
      ]);
      events.push([
        "content_block_delta",
        {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
        },
      ]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return streamReply(sseText(events));
}

/** One streamed Chat Completions answer from these deltas, each chunk checked against OpenAI's schema. */
export function chatTurn(turn: {
  deltas: Record<string, unknown>[];
  finish: string;
  usage: { prompt_tokens: number; completion_tokens: number };
  model?: string;
}): Reply {
  const { deltas, finish, usage } = turn;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
    id: "chatcmpl-e2e",
    object: "chat.completion.chunk",
    created: 1745678496,
    model: turn.model ?? "gpt-4o-mini-2024-07-18",
    choices,
    ...extra,
  });
  const chunks = [
    ...deltas.map((d) => chunk([{ index: 0, delta: d, finish_reason: null }])),
    chunk([{ index: 0, delta: {}, finish_reason: finish }]),
    chunk([], { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
  ];
  for (const data of chunks) {
    const issues = openAIIssues("CreateChatCompletionStreamResponse", data);
    if (issues.length > 0) throw new Error(`A chunk does not match OpenAI's schema: ${issues.join("; ")}`);
  }
  return streamReply(sseText([...chunks.map((data) => [null, data] as const), [null, "[DONE]"]]));
}
