export { approvalAnswers, ChatRequestError, lastUserText, parseChatRequest } from "./chat-request.js";
export {
  UI_MESSAGE_PROFILES,
  type UiFinishReason,
  type UiMessageChunk,
  type UiMessageProfile,
} from "./ui-message-chunk.js";
export {
  UI_MESSAGE_STREAM_HEADERS,
  type UiMessageStreamResponseOptions,
  uiMessageFrame,
  uiMessageStreamResponse,
} from "./ui-message-sse.js";
export { createUiMessageStreamApp, type UiMessageStreamAppOptions } from "./ui-message-stream-app.js";
export {
  approvalIdOf,
  runIdOfApproval,
  toUiMessageChunks,
  UiMessageTranslator,
  type UiMessageTranslatorOptions,
} from "./ui-message-translator.js";
