import type { ModelRequest, ModelToolSpec } from "../../../contracts/language-model.js";
import type { AssistantMessage, ImagePart, Message, TextPart } from "../../../contracts/message.js";
import { imageSource } from "../../image-source.js";

/** One content block of the Messages API, as sent. */
export type AnthropicBlock = Record<string, unknown> & { type: string };

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: string | AnthropicBlock[];
}

export interface AnthropicRequestSettings {
  modelId: string;
  /** `max_tokens` when the call's options give none (the Messages API requires it). */
  maxTokens: number;
}

/** Options the Messages API has no field for; `parallel_tool_calls: false` becomes `disable_parallel_tool_use`. */
const NOT_SENT = new Set(["temperature", "maxTokens", "max_tokens", "seed", "parallel_tool_calls"]);

/**
 * The body of a streamed Messages API call: `system` as a string, or as text blocks when any carries
 * `cache_control` or there are several; system messages of the transcript join it; tool results become
 * `tool_result` blocks of a user turn; consecutive turns of one role merge; reasoning with a signature (or
 * redacted data) is replayed as `thinking` / `redacted_thinking` blocks ahead of the text; other options
 * (`thinking`, `top_k`, `stop_sequences`, …) pass through. A native JSON-schema mode Anthropic has not.
 */
export function toAnthropicRequest(
  request: ModelRequest,
  settings: AnthropicRequestSettings,
): Record<string, unknown> {
  const options = request.options;
  const body: Record<string, unknown> = {
    model: settings.modelId,
    max_tokens: options.maxTokens ?? settings.maxTokens,
  };
  const system = systemBlocks(request);
  if (system.length === 1 && system[0]!.cache_control === undefined) body.system = system[0]!.text;
  else if (system.length > 0) body.system = system;
  body.messages = toAnthropicMessages(request.messages);
  if (options.temperature !== undefined) body.temperature = options.temperature;
  const tools = request.tools;
  if (tools && tools.length > 0) {
    body.tools = tools.map(toAnthropicTool);
    const choice = toolChoice(request.toolChoice, options.parallel_tool_calls === false);
    if (choice) body.tool_choice = choice;
  }
  for (const [key, value] of Object.entries(options)) {
    if (!NOT_SENT.has(key) && value !== undefined) body[key] = value;
  }
  body.stream = true;
  return body;
}

function systemBlocks(request: ModelRequest): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  const add = (content: string | readonly TextPart[]) => {
    if (typeof content === "string") {
      if (content) blocks.push({ type: "text", text: content });
      return;
    }
    for (const part of content) if (part.text) blocks.push(textBlock(part));
  };
  if (request.system !== undefined) add(request.system);
  for (const message of request.messages) if (message.role === "system") add(message.content);
  return blocks;
}

/** The transcript as alternating user and assistant turns. */
export function toAnthropicMessages(messages: readonly Message[]): AnthropicMessage[] {
  const turns: AnthropicMessage[] = [];
  const push = (role: "user" | "assistant", content: string | AnthropicBlock[]) => {
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content = [...asBlocks(last.content), ...asBlocks(content)];
    else turns.push({ role, content });
  };
  for (const message of messages) {
    switch (message.role) {
      case "system":
        break;
      case "user":
        push(
          "user",
          typeof message.content === "string"
            ? message.content
            : message.content.map((part) => (part.type === "text" ? textBlock(part) : imageBlock(part))),
        );
        break;
      case "assistant": {
        const content = assistantContent(message);
        if (content !== undefined) push("assistant", content);
        break;
      }
      case "tool": {
        const result: AnthropicBlock = {
          type: "tool_result",
          tool_use_id: message.toolCallId,
          content: message.content,
        };
        if (message.isError) result.is_error = true;
        push("user", [result]);
        break;
      }
    }
  }
  return turns;
}

function assistantContent(message: AssistantMessage): string | AnthropicBlock[] | undefined {
  const blocks: AnthropicBlock[] = [];
  for (const part of message.reasoning ?? []) {
    // Only blocks Anthropic signed can go back; reasoning from another provider cannot.
    if (part.redactedData !== undefined) blocks.push({ type: "redacted_thinking", data: part.redactedData });
    else if (part.signature !== undefined)
      blocks.push({ type: "thinking", thinking: part.text, signature: part.signature });
  }
  const calls = message.toolCalls ?? [];
  if (blocks.length === 0 && calls.length === 0) return message.content === "" ? undefined : message.content;
  if (message.content !== "") blocks.push({ type: "text", text: message.content });
  for (const call of calls)
    blocks.push({ type: "tool_use", id: call.id, name: call.name, input: call.arguments });
  return blocks;
}

function asBlocks(content: string | AnthropicBlock[]): AnthropicBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

function textBlock(part: TextPart): AnthropicBlock {
  const block: AnthropicBlock = { type: "text", text: part.text };
  if (part.cacheControl !== undefined) block.cache_control = part.cacheControl;
  return block;
}

function imageBlock(part: ImagePart): AnthropicBlock {
  const source = imageSource(part);
  return {
    type: "image",
    source:
      source.kind === "url"
        ? { type: "url", url: source.url }
        : { type: "base64", media_type: source.mediaType, data: source.data },
  };
}

function toAnthropicTool(tool: ModelToolSpec): AnthropicBlock {
  const spec: Record<string, unknown> = {
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema,
  };
  const extras = tool.providerOptions;
  if (extras) {
    const cacheControl = extras.cache_control ?? extras.cacheControl;
    if (cacheControl !== undefined) spec.cache_control = cacheControl;
    const anthropic = extras.anthropic;
    if (typeof anthropic === "object" && anthropic !== null) Object.assign(spec, anthropic);
  }
  return spec as AnthropicBlock;
}

function toolChoice(
  choice: ModelRequest["toolChoice"],
  disableParallel: boolean,
): Record<string, unknown> | undefined {
  let result: Record<string, unknown> | undefined;
  if (choice === "auto") result = { type: "auto" };
  else if (choice === "required") result = { type: "any" };
  else if (choice === "none") result = { type: "none" };
  else if (choice !== undefined) result = { type: "tool", name: choice.name };
  if (disableParallel && result?.type !== "none") {
    result ??= { type: "auto" };
    result.disable_parallel_tool_use = true;
  }
  return result;
}
