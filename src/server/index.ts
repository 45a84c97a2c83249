/**
 * Keel over HTTP: a web-standard handler serving a runtime's agents (the runs API with resumable SSE), the Hono
 * app behind it, and `serveKeel`, which serves it on Node.
 */
export {
  createKeelApp,
  createKeelHandler,
  type KeelHandlerOptions,
  type ServerEnv,
} from "./create-keel-handler.js";
export { type KeelServer, type ServeKeelOptions, serveKeel } from "./serve-keel.js";
export { ServerRequestError } from "./server-error.js";
export type { Tenant } from "./tenancy.js";
