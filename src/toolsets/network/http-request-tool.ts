import type { IncomingMessage } from "node:http";
import type { LookupFunction } from "node:net";
import { z } from "zod";
import type { Tool, ToolResult } from "../../contracts/tool.js";
import { PermissionDeniedError, ToolError, ToolTimeoutError } from "../../errors/error-classes.js";
import type { PluginDefinition } from "../../plugins/plugin-registry.js";
import { defineTool } from "../../tools/define-tool.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import { okResult } from "../filesystem/tool-result.js";
import { blockedRangeOf } from "./address-guard.js";

/** Resolves a host name to its addresses; the seam tests use to point a name at any address. */
export type HostResolver = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export interface HttpRequestToolOptions {
  /** Hosts (as in the URL: a name or an IP literal) the guard lets through whatever they resolve to. */
  allowedHosts?: readonly string[];
  /** Whole request, redirects included. Default 30 s. */
  timeoutMs?: number;
  /** Bytes of response body kept; the rest is cut off and `truncated` set. Default 1 MiB. */
  maxResponseBytes?: number;
  /** Redirects followed (each one checked again). Default 5. */
  maxRedirects?: number;
  /** Default: the system resolver (`dns.lookup`, every address). */
  resolve?: HostResolver;
}

export interface HttpResponseData {
  url: string;
  status: number;
  contentType: string | null;
  body: string;
  bytes: number;
  truncated: boolean;
  redirects: string[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Headers that belong to one origin and are dropped when a redirect leaves it. */
const ORIGIN_HEADERS = ["authorization", "cookie", "proxy-authorization"];

// Node's network modules (dns, net, http, https with tls) are taken when a request is made, not at import: every
// program that imports Keel loads this tool's module, and those modules are a tenth of what Keel adds to start-up.
const systemResolver: HostResolver = (hostname) =>
  process.getBuiltinModule("node:dns/promises").lookup(hostname, { all: true, verbatim: true });

/** The rule a refused address or URL names. */
export const NETWORK_ADDRESS_RULE = "network_address_blocked";

/**
 * `http_request(url, method?, headers?, body?)`: network by declaration, so off unless the agent's config sets
 * `permissions.enable: ["network"]`. Before every connection — the first and each redirect, which are
 * followed by hand — the host is resolved and every address checked: loopback, private, CGNAT, link-local,
 * metadata, unique-local, unspecified, multicast and other special-purpose addresses are refused unless the
 * host is in `allowedHosts`. The connection goes to the address that was checked (no second lookup).
 */
export function createHttpRequestTool(options: HttpRequestToolOptions = {}): Tool {
  const allowed = new Set((options.allowedHosts ?? []).map(normalizeHost));
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxBytes = options.maxResponseBytes ?? 1024 * 1024;
  const maxRedirects = options.maxRedirects ?? 5;
  const resolve = options.resolve ?? systemResolver;
  return defineTool({
    name: "http_request",
    description:
      "Make an HTTP(S) request and return the status and the response body as text " +
      `(at most ${maxBytes} bytes; longer bodies are cut off). Private and local addresses are refused.`,
    inputSchema: z.object({
      url: z.string().describe("An http:// or https:// URL"),
      method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]).optional().describe("Default GET"),
      headers: z.record(z.string(), z.string()).optional(),
      body: z.string().optional().describe("Request body (text)"),
    }),
    sideEffects: "network",
    durableIdempotent: false,
    execute: async (params, ctx): Promise<ToolResult<HttpResponseData>> => {
      const controller = new AbortController();
      const timer = setTimeout(
        () =>
          controller.abort(
            new ToolTimeoutError(`http_request timed out after ${timeoutMs} ms`, { timeoutMs }),
          ),
        timeoutMs,
      );
      const onAbort = () => controller.abort(ctx?.signal?.reason);
      ctx?.signal?.addEventListener("abort", onAbort, { once: true });
      try {
        return await fetchGuarded(params, controller.signal, {
          allowed,
          maxBytes,
          maxRedirects,
          resolve,
        });
      } finally {
        clearTimeout(timer);
        ctx?.signal?.removeEventListener("abort", onAbort);
      }
    },
  }) as Tool;
}

function normalizeHost(host: string): string {
  const lower = host.trim().toLowerCase();
  return lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
}

function parseUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = base === undefined ? new URL(raw) : new URL(raw, base);
  } catch {
    throw new PermissionDeniedError(`http_request: '${raw}' is not a valid URL`, {
      rule: NETWORK_ADDRESS_RULE,
    });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new PermissionDeniedError(
      `http_request: only http and https URLs are allowed, not ${url.protocol}`,
      {
        rule: NETWORK_ADDRESS_RULE,
      },
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new PermissionDeniedError("http_request: URLs with credentials are refused", {
      rule: NETWORK_ADDRESS_RULE,
    });
  }
  return url;
}

/**
 * The address to connect to: the URL's host (the WHATWG parser has already turned decimal, octal and hex IPv4
 * forms into dotted quads), resolved unless it is an IP literal, every address checked.
 */
async function checkedAddress(
  url: URL,
  allowed: ReadonlySet<string>,
  resolve: HostResolver,
): Promise<{ address: string; family: number }> {
  const host = normalizeHost(url.hostname);
  const literal = process.getBuiltinModule("node:net").isIP(host);
  let addresses: readonly { address: string; family: number }[];
  if (literal !== 0) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = await resolve(host);
    } catch (error) {
      throw new ToolError(`http_request: cannot resolve ${host}: ${(error as Error).message}`);
    }
    if (addresses.length === 0) throw new ToolError(`http_request: ${host} has no addresses`);
  }
  if (!allowed.has(host)) {
    for (const { address } of addresses) {
      const range = blockedRangeOf(address);
      if (range === null) continue;
      const shown = literal !== 0 ? host : `${host} (resolves to ${address})`;
      throw new PermissionDeniedError(
        `http_request: ${shown} is a ${range.replace("_", "-")} address; requests to loopback, private, ` +
          "link-local, metadata and other non-public addresses are refused (rule network_address_blocked) " +
          "unless the tool's config lists the host in allowed_hosts",
        { rule: NETWORK_ADDRESS_RULE },
      );
    }
  }
  return addresses[0]!;
}

async function fetchGuarded(
  params: {
    url: string;
    method?: string | undefined;
    headers?: Record<string, string> | undefined;
    body?: string | undefined;
  },
  signal: AbortSignal,
  options: { allowed: ReadonlySet<string>; maxBytes: number; maxRedirects: number; resolve: HostResolver },
): Promise<ToolResult<HttpResponseData>> {
  let url = parseUrl(params.url);
  let method = params.method ?? "GET";
  let body = params.body;
  const headers: Record<string, string> = { ...params.headers };
  const redirects: string[] = [];
  for (;;) {
    if (signal.aborted) throw signal.reason;
    const pinned = await checkedAddress(url, options.allowed, options.resolve);
    const response = await send(url, pinned, { method, headers, body, signal });
    const location = response.headers.location;
    if (REDIRECTS.has(response.statusCode ?? 0) && typeof location === "string") {
      response.resume();
      if (redirects.length >= options.maxRedirects) {
        throw new ToolError(`http_request: more than ${options.maxRedirects} redirects`);
      }
      const next = parseUrl(location, url);
      if (next.origin !== url.origin)
        for (const name of Object.keys(headers)) {
          if (ORIGIN_HEADERS.includes(name.toLowerCase())) delete headers[name];
        }
      const status = response.statusCode!;
      if (status === 303 || ((status === 301 || status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
      }
      redirects.push(next.href);
      url = next;
      continue;
    }
    const { text, bytes, truncated } = await readBounded(response, options.maxBytes);
    const status = response.statusCode ?? 0;
    const data: HttpResponseData = {
      url: url.href,
      status,
      contentType: response.headers["content-type"] ?? null,
      body: text,
      bytes,
      truncated,
      redirects,
    };
    const summary = `${method} ${url.href} → ${status} (${bytes} bytes${truncated ? ", truncated" : ""})`;
    return okResult(summary, data);
  }
}

/** One HTTP request as it is sent, redirects being new requests. */
interface OutgoingRequest {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
}

/** Send `request` to `url`, connecting to `pinned`, the address that was checked for it. */
function send(
  url: URL,
  pinned: { address: string; family: number },
  { method, headers, body, signal }: OutgoingRequest,
): Promise<IncomingMessage> {
  // Connect to the checked address only: a second lookup could answer differently (DNS rebinding).
  const lookup = ((
    _hostname: string,
    lookupOptions: { all?: boolean },
    callback: (...args: unknown[]) => void,
  ) => {
    if (lookupOptions.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  }) as unknown as LookupFunction;
  const { request } = process.getBuiltinModule(url.protocol === "https:" ? "node:https" : "node:http");
  return new Promise((resolvePromise, reject) => {
    const req = request(url, { method, headers, lookup, signal, agent: false }, resolvePromise);
    req.on("error", (error) =>
      reject(signal.aborted ? signal.reason : new ToolError(`http_request: ${error.message}`)),
    );
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function readBounded(
  response: IncomingMessage,
  maxBytes: number,
): Promise<{ text: string; bytes: number; truncated: boolean }> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let truncated = false;
    response.on("data", (chunk: Buffer) => {
      if (truncated) return;
      const room = maxBytes - bytes;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        bytes += room;
        truncated = true;
        response.destroy();
        resolvePromise({ text: Buffer.concat(chunks).toString("utf8"), bytes, truncated });
        return;
      }
      chunks.push(chunk);
      bytes += chunk.length;
    });
    response.on("end", () =>
      resolvePromise({ text: Buffer.concat(chunks).toString("utf8"), bytes, truncated }),
    );
    response.on("error", (error) => {
      if (!truncated) reject(new ToolError(`http_request: ${error.message}`));
    });
  });
}

const httpRequestToolConfig = builtOnFirstUse(() => {
  const positiveInt = z.number().int().positive();
  return z.object({
    allowed_hosts: z.array(z.string().min(1)).optional(),
    timeout_ms: positiveInt.optional(),
    max_response_bytes: positiveInt.optional(),
    max_redirects: z.number().int().min(0).max(20).optional(),
  });
});

/** `{"id": "http_request", "type": "http_request", "config": {"allowed_hosts": [...]}}`. */
export const httpRequestToolPlugin: PluginDefinition<Tool> = {
  kind: "tool",
  type: "http_request",
  get configSchema() {
    return httpRequestToolConfig();
  },
  create: (config) => {
    const parsed = httpRequestToolConfig().parse(config);
    const options: HttpRequestToolOptions = {};
    if (parsed.allowed_hosts !== undefined) options.allowedHosts = parsed.allowed_hosts;
    if (parsed.timeout_ms !== undefined) options.timeoutMs = parsed.timeout_ms;
    if (parsed.max_response_bytes !== undefined) options.maxResponseBytes = parsed.max_response_bytes;
    if (parsed.max_redirects !== undefined) options.maxRedirects = parsed.max_redirects;
    return createHttpRequestTool(options);
  },
};
