import type { ModelRequest } from "../../../contracts/language-model.js";
import type { ImagePart, Message, TextPart, ToolCall } from "../../../contracts/message.js";
import { imageSource } from "../../image-source.js";
import { toJsonSchemaFormat } from "./to-json-schema-format.js";

export interface OpenAIRequestSettings {
  modelId: string;
  /** A reasoning model gets `max_completion_tokens` and no `temperature`. */
  reasoning: boolean;
  /** `max_tokens` from the agent's `llm` when a call gives none. */
  maxTokens?: number | undefined;
}

/** Keys of the call options Keel maps itself rather than passing through. */
const MAPPED = new Set(["temperature", "maxTokens", "max_tokens", "max_completion_tokens"]);

/**
 * The body of a streamed Chat Completions call: system text first, then the transcript (assistant tool calls
 * as `tool_calls` with their raw argument text, tool results as `tool` messages, images as `image_url` parts),
 * `stream_options.include_usage` for the final usage chunk, tools as functions, the output schema as
 * `response_format: json_schema`, and the other options (`seed`, `top_p`, `parallel_tool_calls`,
 * `reasoning_effort`, …) passed through — `parallel_tool_calls` only with tools, where the API allows it.
 */
export function toChatCompletionsRequest(
  request: ModelRequest,
  settings: OpenAIRequestSettings,
): Record<string, unknown> {
  const options = request.options;
  const messages: Record<string, unknown>[] = [];
  const system = systemText(request.system);
  if (system) messages.push({ role: "system", content: system });
  for (const message of request.messages) messages.push(...toChatMessages(message));
  const body: Record<string, unknown> = {
    model: settings.modelId,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (options.temperature !== undefined && !settings.reasoning) body.temperature = options.temperature;
  const maxTokens = options.maxTokens ?? settings.maxTokens;
  if (maxTokens !== undefined) body[settings.reasoning ? "max_completion_tokens" : "max_tokens"] = maxTokens;
  const tools = request.tools;
  const hasTools = tools !== undefined && tools.length > 0;
  if (hasTools) {
    body.tools = tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }));
    const choice = request.toolChoice;
    if (choice !== undefined) {
      body.tool_choice =
        typeof choice === "string" ? choice : { type: "function", function: { name: choice.name } };
    }
  }
  if (request.outputSchema) {
    body.response_format = { type: "json_schema", json_schema: toJsonSchemaFormat(request.outputSchema) };
  }
  for (const [key, value] of Object.entries(options)) {
    if (MAPPED.has(key) || value === undefined) continue;
    if (key === "parallel_tool_calls" && !hasTools) continue;
    body[key] = value;
  }
  return body;
}

/** System text as one string (system blocks joined by blank lines). */
export function systemText(system: string | readonly TextPart[] | undefined): string {
  if (system === undefined) return "";
  if (typeof system === "string") return system;
  return system
    .map((part) => part.text)
    .filter(Boolean)
    .join("\n\n");
}

function toChatMessages(message: Message): Record<string, unknown>[] {
  switch (message.role) {
    case "system":
      return [{ role: "system", content: systemText(message.content) }];
    case "user":
      return [
        {
          role: "user",
          content:
            typeof message.content === "string"
              ? message.content
              : message.content.map((part) =>
                  part.type === "text" ? { type: "text", text: part.text } : imagePart(part),
                ),
        },
      ];
    case "assistant": {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return [{ role: "assistant", content: message.content }];
      return [
        {
          role: "assistant",
          content: message.content === "" ? null : message.content,
          tool_calls: calls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: argumentText(call) },
          })),
        },
      ];
    }
    case "tool":
      return [{ role: "tool", tool_call_id: message.toolCallId, content: message.content }];
  }
}

/** The arguments as the model wrote them when they were valid JSON, so a replay is byte for byte. */
export function argumentText(call: ToolCall): string {
  if (call.rawArguments !== undefined && call.argumentsError === undefined) return call.rawArguments;
  return JSON.stringify(call.arguments);
}

function imagePart(part: ImagePart): Record<string, unknown> {
  const source = imageSource(part);
  return {
    type: "image_url",
    image_url: { url: source.kind === "url" ? source.url : `data:${source.mediaType};base64,${source.data}` },
  };
}
