import { PluginLoadError } from "../errors/error-classes.js";

/** The npm package the `mcp` tool type needs (an optional peer dependency of Keel). */
export const MCP_SDK_PACKAGE = "@modelcontextprotocol/sdk";

/** The part of the SDK's `Transport` Keel touches. */
export interface McpTransportLike {
  close(): Promise<void>;
  /** Streamable HTTP only: `DELETE` the session on the server. */
  terminateSession?(): Promise<void>;
  /** Streamable HTTP only: the session id the server gave. */
  readonly sessionId?: string | undefined;
  /** stdio only: the child process id. */
  readonly pid?: number | null;
}

export interface McpRequestOptions {
  timeout?: number;
  signal?: AbortSignal;
}

/** An MCP tool as `tools/list` describes it. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

/** What `tools/call` answers. */
export interface McpCallResult {
  content?: Record<string, unknown>[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** Servers of protocol 2024-10-07 answer `{toolResult}` instead. */
  toolResult?: unknown;
}

/** The part of the SDK's `Client` Keel uses. */
export interface McpClientLike {
  connect(transport: McpTransportLike, options?: McpRequestOptions): Promise<void>;
  listTools(
    params?: { cursor?: string },
    options?: McpRequestOptions,
  ): Promise<{ tools: McpToolInfo[]; nextCursor?: string }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: unknown,
    options?: McpRequestOptions,
  ): Promise<McpCallResult>;
  close(): Promise<void>;
  onclose?: (() => void) | undefined;
}

export type ArgumentValidator = (
  input: unknown,
) => { valid: true; data: unknown } | { valid: false; errorMessage: string };

/** The SDK classes Keel builds MCP connections from. */
export interface McpSdk {
  createClient(): McpClientLike;
  stdioTransport(params: {
    command: string;
    args?: string[];
    env?: Record<string, string>;
    cwd?: string;
    stderr?: "inherit" | "ignore" | "pipe";
  }): McpTransportLike;
  httpTransport(url: URL, options: { requestInit?: RequestInit }): McpTransportLike;
  /** A JSON Schema validator for a tool's input schema (the SDK's Ajv provider). */
  compileSchema(schema: Record<string, unknown>): ArgumentValidator;
  /** The HTTP status of a Streamable HTTP error (404 for a session the server does not know), else undefined. */
  httpStatus(error: unknown): number | undefined;
}

let cached: Promise<McpSdk> | undefined;

/**
 * Import `@modelcontextprotocol/sdk` once. Without it, a `PluginLoadError` naming the package. Nothing of the
 * SDK is loaded until an `mcp` tool is built.
 */
export function loadMcpSdk(): Promise<McpSdk> {
  cached ??= importMcpSdk().catch((error: unknown) => {
    cached = undefined;
    throw error;
  });
  return cached;
}

/** Import the SDK's modules; `importModule` replaces `import()` (tests, bundlers). Not cached. */
export async function importMcpSdk(
  importModule: (specifier: string) => Promise<unknown> = (specifier) => import(specifier),
): Promise<McpSdk> {
  // Variable specifiers keep TypeScript and bundlers from requiring the optional package at build time.
  const base: string = MCP_SDK_PACKAGE;
  let modules: Record<string, unknown>[];
  try {
    modules = (await Promise.all([
      importModule(`${base}/client/index.js`),
      importModule(`${base}/client/stdio.js`),
      importModule(`${base}/client/streamableHttp.js`),
      importModule(`${base}/validation/ajv`),
    ])) as Record<string, unknown>[];
  } catch (error) {
    throw new PluginLoadError(
      `tool "mcp" needs the npm package ${MCP_SDK_PACKAGE}, which could not be imported`,
      { hint: `npm install ${MCP_SDK_PACKAGE}`, cause: error },
    );
  }
  const [clientModule, stdioModule, httpModule, ajvModule] = modules as [
    { Client: new (info: { name: string; version: string }, options: unknown) => McpClientLike },
    { StdioClientTransport: new (params: unknown) => McpTransportLike },
    {
      StreamableHTTPClientTransport: new (url: URL, options: unknown) => McpTransportLike;
      StreamableHTTPError: new (...args: never[]) => Error & { code?: number };
    },
    {
      AjvJsonSchemaValidator: new () => {
        getValidator(schema: unknown): (input: unknown) => {
          valid: boolean;
          data?: unknown;
          errorMessage?: string;
        };
      };
    },
  ];
  if (typeof clientModule.Client !== "function" || typeof ajvModule.AjvJsonSchemaValidator !== "function") {
    throw new PluginLoadError(`tool "mcp": this version of ${MCP_SDK_PACKAGE} is not supported`, {
      hint: `Install a current version: npm install ${MCP_SDK_PACKAGE}@^1.32.0`,
    });
  }
  const validator = new ajvModule.AjvJsonSchemaValidator();
  return {
    createClient: () => new clientModule.Client({ name: "keel", version: "0.1.0" }, { capabilities: {} }),
    stdioTransport: (params) => new stdioModule.StdioClientTransport(params),
    httpTransport: (url, options) => new httpModule.StreamableHTTPClientTransport(url, options),
    compileSchema: (schema) => {
      const validate = validator.getValidator(schema);
      return (input) => {
        const outcome = validate(input);
        return outcome.valid
          ? { valid: true, data: outcome.data }
          : { valid: false, errorMessage: outcome.errorMessage ?? "invalid arguments" };
      };
    },
    httpStatus: (error) =>
      error instanceof httpModule.StreamableHTTPError && typeof error.code === "number"
        ? error.code
        : undefined,
  };
}
