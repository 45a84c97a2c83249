import { timingSafeEqual } from "node:crypto";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Runtime } from "../runtime/runtime.js";
import { type AgUiAppOptions, type AgUiScope, createAgUiApp } from "./ag-ui/create-ag-ui-app.js";
import { type ConsoleOptions, createConsoleApp } from "./create-console-app.js";
import { runsRoutes, type ServerEnv } from "./runs-routes.js";
import { errorResponse, ServerRequestError } from "./server-error.js";
import { clientSessionId, ownsRun, storedSessionId, type Tenant, tenantOf } from "./tenancy.js";
import {
  createUiMessageStreamApp,
  type UiMessageStreamAppOptions,
} from "./ui-message-stream/ui-message-stream-app.js";

export interface KeelHandlerOptions {
  /**
   * The bearer tokens that may call the server; each is a tenant that sees only its own runs. One string or a
   * list. Without one, every request is the one local tenant: serve it on loopback only (`keel serve` refuses
   * anything else).
   */
  token?: string | readonly string[];
  /** Where the API lives, e.g. `/api`. Default: the root. */
  basePath?: string;
  /** The largest request body, in bytes; a larger one is a 413. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Host names the server answers to (the DNS-rebinding guard): a request whose Host, or Origin when it has
   * one, names another host is a 403. Default: none checked; `keel serve` on loopback passes the loopback names.
   */
  allowedHosts?: readonly string[] | (() => readonly string[]);
  /** Seconds between the comment frames of an idle event stream. Default 15. */
  heartbeatSeconds?: number;
  /** Frames an event stream may hold for a client that is not reading. Default 256. */
  maxQueuedFrames?: number;
  /** How long a client that reads nothing while frames wait keeps its stream, in ms. Default 30,000. */
  stallTimeoutMs?: number;
  /** Sub-apps mounted under the base path, by path (e.g. the protocol endpoints). They see the `tenant` variable. */
  mount?: Readonly<Record<string, Hono<ServerEnv>>>;
  /**
   * The AG-UI endpoint at `/ag-ui` (`POST /ag-ui/:agentId`, for `@ag-ui/client`'s HttpAgent and CopilotKit), its
   * threads and runs the caller's tenant's only. `false` leaves it out. Default: on, profile 0.0.59.
   */
  agUi?: false | Omit<AgUiAppOptions, "scope">;
  /**
   * The AI SDK UI message stream at `/ui` (`POST /ui/:agentId/chat` for `useChat`'s `DefaultChatTransport`,
   * `GET /ui/:agentId/chat/:chatId/stream` to re-attach), each chat the caller's tenant's session. `false` leaves
   * it out. Default: on, profile v6.
   */
  uiMessageStream?: false | Omit<UiMessageStreamAppOptions, "sessionId">;
  /**
   * The web console at the base path's root (`GET /` and its `assets/`): chat with the agents, follow a run on
   * its timeline, decide suspended calls, browse runs, checkpoints and policies. The page itself needs no
   * token; it asks for one and sends it to the API. Default: off (`keel serve` turns it on).
   */
  console?: boolean | ConsoleOptions;
}

/**
 * The Hono app that serves a runtime: bearer auth and tenancy, the host guard, body limits, JSON errors for every
 * refusal, and the runs API. Mount it in a Hono app, or use `createKeelHandler` for a plain fetch handler.
 */
export function createKeelApp(runtime: Runtime, options: KeelHandlerOptions = {}): Hono<ServerEnv> {
  const tokens =
    options.token === undefined ? [] : typeof options.token === "string" ? [options.token] : options.token;
  const given = options.allowedHosts;
  const allowedHosts = () =>
    (typeof given === "function" ? given() : (given ?? [])).map((host) => host.toLowerCase());
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const app = new Hono<ServerEnv>();

  app.onError((error) => errorResponse(error));
  app.notFound((c) =>
    errorResponse(
      new ServerRequestError(404, `No route ${c.req.method} ${c.req.path}`, {
        code: "route.unknown",
        hint: routesHint(options),
      }),
    ),
  );

  const guardHost = (c: Context) => {
    if (given !== undefined) checkHost(c.req.header("host"), c.req.header("origin"), allowedHosts());
  };
  const base = normalizeBasePath(options.basePath);
  // Before the API, whose middleware asks every request for a token: the page is served without one.
  if (options.console !== undefined && options.console !== false)
    app.route(
      "/",
      createConsoleApp({
        ...(options.console === true ? {} : options.console),
        guard: guardHost,
        basePath: base,
      }),
    );

  const api = new Hono<ServerEnv>();
  api.use(async (c, next) => {
    guardHost(c);
    const tenantToken = authenticate(c.req.header("authorization"), tokens);
    c.set("tenant", tenantOf(tenantToken));
    await next();
  });
  api.use(
    bodyLimit({
      maxSize: maxBodyBytes,
      onError: () =>
        errorResponse(
          new ServerRequestError(413, `The request body is larger than ${maxBodyBytes} bytes`, {
            code: "request.too_large",
            hint: "Send a smaller body; the server's limit is maxBodyBytes",
          }),
        ),
    }),
  );
  api.route(
    "/",
    runsRoutes(runtime, {
      heartbeatMs: (options.heartbeatSeconds ?? 15) * 1000,
      maxQueuedFrames: options.maxQueuedFrames ?? 256,
      stallTimeoutMs: options.stallTimeoutMs ?? 30_000,
    }),
  );
  if (options.agUi !== false)
    api.route("/ag-ui", createAgUiApp(runtime, { ...options.agUi, scope: TENANT_SCOPE }));
  if (options.uiMessageStream !== false) {
    const sessionId = (chatId: string, c: Context) => storedSessionId(tenantIn(c), chatId);
    api.route("/ui", createUiMessageStreamApp(runtime, { ...options.uiMessageStream, sessionId }));
  }
  for (const [path, sub] of Object.entries(options.mount ?? {})) api.route(path, sub);
  app.route(base, api);
  return app;
}

/**
 * A web-standard handler (`Request` in, `Response` out) serving a runtime's agents over HTTP: mount it in a
 * Next.js route handler, Hono, or Node through `@hono/node-server` (`keel serve` does).
 *
 * @example
 * const handler = createKeelHandler(runtime, { token: process.env.KEEL_SERVER_TOKEN });
 * serve({ fetch: handler, port: 8787 });
 */
export function createKeelHandler(
  runtime: Runtime,
  options: KeelHandlerOptions = {},
): (request: Request) => Promise<Response> {
  const app = createKeelApp(runtime, options);
  return async (request) => app.fetch(request);
}

/** AG-UI threads as the runs API keeps sessions: in the store under the caller's tenant. */
const TENANT_SCOPE: AgUiScope = {
  sessionId: (c, threadId) => storedSessionId(tenantIn(c), threadId),
  threadId: (c, sessionId) => clientSessionId(tenantIn(c), sessionId),
  owns: (c, record) => ownsRun(tenantIn(c), record),
};

function tenantIn(c: Context): Tenant {
  return (c as Context<ServerEnv>).get("tenant");
}

function authenticate(header: string | undefined, tokens: readonly string[]): string | undefined {
  if (tokens.length === 0) return undefined;
  const match = header === undefined ? null : /^Bearer ([^\s]+)$/i.exec(header);
  const given = match?.[1];
  if (given !== undefined) {
    const found = tokens.find((token) => sameSecret(token, given));
    if (found !== undefined) return found;
  }
  throw new ServerRequestError(
    401,
    header === undefined ? "The request has no bearer token" : "The bearer token is not accepted",
    {
      code: "auth.required",
      hint: "Send 'Authorization: Bearer <token>' with the token the server was started with (--token or KEEL_SERVER_TOKEN)",
    },
  );
}

/** Compare in time that does not depend on where the strings differ. */
function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

function checkHost(host: string | undefined, origin: string | undefined, allowed: readonly string[]): void {
  const refuse = (what: string) =>
    new ServerRequestError(403, `${what} is not one this server answers to`, {
      code: "request.host",
      hint: `Call the server by one of: ${allowed.join(", ")}`,
    });
  if (host === undefined || !allowed.includes(host.toLowerCase())) throw refuse("The Host header");
  if (origin === undefined) return;
  let originHost: string;
  try {
    originHost = new URL(origin).host.toLowerCase();
  } catch {
    throw refuse("The Origin header");
  }
  if (!allowed.includes(originHost)) throw refuse("The Origin header");
}

function normalizeBasePath(basePath: string | undefined): string {
  if (basePath === undefined || basePath === "" || basePath === "/") return "/";
  const trimmed = basePath.replace(/\/+$/, "");
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

function routesHint(options: KeelHandlerOptions): string {
  const base = normalizeBasePath(options.basePath).replace(/\/$/, "");
  return `The API: GET ${base}/agents, GET|POST ${base}/runs, GET ${base}/runs/:runId[/events|/checkpoints|/policy], POST ${base}/runs/:runId/(decisions|cancel|resume)`;
}

export type { ServerEnv };
