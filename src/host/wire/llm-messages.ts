import type { ModelRequest, ModelStreamPart, ModelToolSpec } from "../../contracts/language-model.js";
import type { Message as KeelMessage, ToolCall as KeelToolCall } from "../../contracts/message.js";
import type { Message } from "./run-result.js";

/**
 * Keel's model messages and the protocol's (OpenAI-shaped: `role`, `content`, `tool_calls`, `tool_call_id`), both
 * ways: the runner sends its transcript to the host's model in the protocol's shape, and the host turns it back
 * into a Keel request for the model it serves it with.
 */

/** A tool as the protocol's model calls list it (`funcs`). */
export interface WireFunction {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export function toWireMessages(request: Pick<ModelRequest, "system" | "messages">): Message[] {
  const messages: Message[] = [];
  const system =
    typeof request.system === "string" ? request.system : request.system?.map((part) => part.text).join("");
  if (system) messages.push({ role: "system", content: system });
  for (const message of request.messages) messages.push(toWireMessage(message));
  return messages;
}

function toWireMessage(message: KeelMessage): Message {
  switch (message.role) {
    case "system":
      return { role: "system", content: textOf(message.content) };
    case "user":
      return {
        role: "user",
        content:
          typeof message.content === "string"
            ? message.content
            : message.content.map((part) =>
                part.type === "text"
                  ? { type: "text", text: part.text }
                  : { type: "image_base64", image_base64: part.data },
              ),
      };
    case "assistant":
      return {
        role: "assistant",
        content: message.content,
        ...(message.toolCalls?.length
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: "function",
                function: { name: call.name, arguments: call.rawArguments ?? JSON.stringify(call.arguments) },
              })),
            }
          : {}),
      };
    case "tool":
      return {
        role: "tool",
        content: message.content,
        tool_call_id: message.toolCallId,
        name: message.toolName,
      };
  }
}

export function toWireFunctions(tools: readonly ModelToolSpec[] | undefined): WireFunction[] {
  return (tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.inputSchema,
  }));
}

/** The protocol's messages as a Keel model request (the system message becomes `system`). */
export function fromWireMessages(
  messages: readonly Message[],
  funcs: readonly WireFunction[],
): Pick<ModelRequest, "system" | "messages" | "tools"> {
  const system: string[] = [];
  const converted: KeelMessage[] = [];
  for (const message of messages) {
    const text = textOf(message.content);
    if (message.role === "system") system.push(text);
    else if (message.role === "assistant") {
      const toolCalls: KeelToolCall[] = (message.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function.name,
        arguments: parseArguments(call.function.arguments),
        rawArguments: call.function.arguments,
      }));
      converted.push({ role: "assistant", content: text, ...(toolCalls.length > 0 ? { toolCalls } : {}) });
    } else if (message.role === "tool") {
      converted.push({
        role: "tool",
        toolCallId: message.tool_call_id ?? "",
        toolName: message.name ?? "",
        content: text,
      });
    } else converted.push({ role: "user", content: text });
  }
  const tools = funcs.map((func) => ({
    name: func.name,
    description: func.description ?? "",
    inputSchema: func.parameters ?? {},
  }));
  return {
    ...(system.length > 0 ? { system: system.join("\n\n") } : {}),
    messages: converted,
    ...(tools.length > 0 ? { tools } : {}),
  };
}

/**
 * Folds a protocol message chunk into model stream parts: its `content` as a text delta, each tool call once it
 * is complete. `seenToolCalls` keeps the ids already emitted across chunks of one call.
 */
export function partsOfWireChunk(message: Message, seenToolCalls: Set<string>): ModelStreamPart[] {
  const parts: ModelStreamPart[] = [];
  const text = textOf(message.content);
  if (text.length > 0) parts.push({ type: "text-delta", text });
  for (const call of message.tool_calls ?? []) {
    if (seenToolCalls.has(call.id)) continue;
    seenToolCalls.add(call.id);
    parts.push({
      type: "tool-call",
      id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
    });
  }
  return parts;
}

function textOf(content: Message["content"] | KeelMessage["content"]): string {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");
}

function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
