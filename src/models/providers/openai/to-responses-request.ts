import type { ModelRequest } from "../../../contracts/language-model.js";
import type { Message } from "../../../contracts/message.js";
import { imageSource } from "../../image-source.js";
import { argumentText, type OpenAIRequestSettings, systemText } from "./to-chat-completions-request.js";
import { toJsonSchemaFormat } from "./to-json-schema-format.js";

/** Keys of the call options Keel maps itself rather than passing through. */
const MAPPED = new Set([
  "temperature",
  "maxTokens",
  "max_tokens",
  "max_completion_tokens",
  "max_output_tokens",
  "reasoning_effort",
]);

/**
 * The body of a Responses API call, made as one non-streamed call: system text as `instructions`, the
 * transcript as `input` items (messages with `input_text` / `input_image` parts, `function_call` and
 * `function_call_output` items), `max_output_tokens`, tools as flat functions, the output schema as
 * `text.format` and `reasoning_effort` as `reasoning.effort`; other options pass through.
 */
export function toResponsesRequest(
  request: ModelRequest,
  settings: OpenAIRequestSettings,
): Record<string, unknown> {
  const options = request.options;
  const instructions: string[] = [];
  const own = systemText(request.system);
  if (own) instructions.push(own);
  const input: Record<string, unknown>[] = [];
  for (const message of request.messages) {
    if (message.role === "system") {
      const text = systemText(message.content);
      if (text) instructions.push(text);
    } else {
      input.push(...toInputItems(message));
    }
  }
  const body: Record<string, unknown> = { model: settings.modelId, input };
  if (instructions.length > 0) body.instructions = instructions.join("\n\n");
  const maxTokens = options.maxTokens ?? settings.maxTokens;
  if (maxTokens !== undefined) body.max_output_tokens = maxTokens;
  if (options.temperature !== undefined && !settings.reasoning) body.temperature = options.temperature;
  const tools = request.tools;
  const hasTools = tools !== undefined && tools.length > 0;
  if (hasTools) {
    body.tools = tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      strict: false,
    }));
    const choice = request.toolChoice;
    if (choice !== undefined) {
      body.tool_choice = typeof choice === "string" ? choice : { type: "function", name: choice.name };
    }
  }
  if (request.outputSchema) {
    body.text = { format: { type: "json_schema", ...toJsonSchemaFormat(request.outputSchema) } };
  }
  if (typeof options.reasoning_effort === "string") body.reasoning = { effort: options.reasoning_effort };
  for (const [key, value] of Object.entries(options)) {
    if (MAPPED.has(key) || value === undefined) continue;
    if (key === "parallel_tool_calls" && !hasTools) continue;
    body[key] = value;
  }
  return body;
}

function toInputItems(message: Exclude<Message, { role: "system" }>): Record<string, unknown>[] {
  switch (message.role) {
    case "user":
      return [
        {
          role: "user",
          content:
            typeof message.content === "string"
              ? message.content
              : message.content.map((part) => {
                  if (part.type === "text") return { type: "input_text", text: part.text };
                  const source = imageSource(part);
                  return {
                    type: "input_image",
                    image_url:
                      source.kind === "url" ? source.url : `data:${source.mediaType};base64,${source.data}`,
                    detail: "auto",
                  };
                }),
        },
      ];
    case "assistant": {
      const items: Record<string, unknown>[] = [];
      if (message.content !== "") items.push({ role: "assistant", content: message.content });
      for (const call of message.toolCalls ?? []) {
        items.push({
          type: "function_call",
          call_id: call.id,
          name: call.name,
          arguments: argumentText(call),
        });
      }
      return items;
    }
    case "tool":
      return [{ type: "function_call_output", call_id: message.toolCallId, output: message.content }];
  }
}
