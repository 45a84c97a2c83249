/** Keel's provider-neutral transcript messages. Providers map them to and from their wire formats. */

export interface TextPart {
  type: "text";
  text: string;
  /** Passed through to providers that support prompt caching (Anthropic `cache_control`). */
  cacheControl?: Record<string, unknown>;
}

export interface ImagePart {
  type: "image";
  /** Base64 data (without a `data:` prefix) or an `https:` URL. */
  data: string;
  mediaType?: string;
}

/** A reasoning block kept and replayed to the provider but never counted as output text. */
export interface ReasoningPart {
  type: "reasoning";
  text: string;
  signature?: string;
  /** Opaque data of a redacted block (Anthropic `redacted_thinking`). */
  redactedData?: string;
}

export interface ToolCall {
  id: string;
  name: string;
  /** Parsed arguments; `{}` when the model sent arguments that are not a JSON object. */
  arguments: Record<string, unknown>;
  /** The raw argument text as the model sent it, when it came as text. */
  rawArguments?: string;
  /** Set when `rawArguments` could not be parsed; the call then fails with a tool error the model sees. */
  argumentsError?: string;
}

export interface SystemMessage {
  role: "system";
  content: string | TextPart[];
}

export interface UserMessage {
  role: "user";
  content: string | (TextPart | ImagePart)[];
}

export interface AssistantMessage {
  role: "assistant";
  content: string;
  toolCalls?: ToolCall[];
  reasoning?: ReasoningPart[];
}

export interface ToolMessage {
  role: "tool";
  toolCallId: string;
  toolName: string;
  content: string;
  isError?: boolean;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** The plain text of a message's content. */
export function messageText(message: Message): string {
  const content = message.content;
  if (typeof content === "string") return content;
  let text = "";
  for (const part of content) if (part.type === "text") text += part.text;
  return text;
}
