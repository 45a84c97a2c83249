/**
 * Keel over HTTP: a web-standard handler serving a runtime's agents (the runs API with resumable SSE), the Hono
 * app behind it, and `serveKeel`, which serves it on Node.
 */

export type { AgUiProfile } from "./ag-ui/ag-ui-types.js";
export { type AgUiAppOptions, type AgUiScope, createAgUiApp } from "./ag-ui/create-ag-ui-app.js";
export type { ConsoleOptions } from "./create-console-app.js";
export {
  createKeelApp,
  createKeelHandler,
  type KeelHandlerOptions,
  type ServerEnv,
} from "./create-keel-handler.js";
export { type KeelServer, type ServeKeelOptions, serveKeel } from "./serve-keel.js";
export { ServerRequestError } from "./server-error.js";
export type { Tenant } from "./tenancy.js";
export type { UiMessageProfile } from "./ui-message-stream/ui-message-chunk.js";
export {
  createUiMessageStreamApp,
  type UiMessageStreamAppOptions,
} from "./ui-message-stream/ui-message-stream-app.js";
