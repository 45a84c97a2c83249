import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tool, ToolContext, ToolResult } from "../../contracts/tool.js";
import { Runtime } from "../../index.js";
import { scriptedModel } from "../../testing/index.js";
import { blockedRangeOf } from "./address-guard.js";
import { createHttpRequestTool, type HostResolver, type HttpResponseData } from "./http-request-tool.js";

const ctx = { runId: "run-1", signal: new AbortController().signal } as unknown as ToolContext;

/** Names the tests resolve themselves: the system resolver is never asked. */
const NAMES: Record<string, string[]> = {
  "localhost.test": ["127.0.0.1"],
  "internal.test": ["10.0.0.1"],
  "metadata.test": ["169.254.169.254"],
  "rebind.test": ["93.184.216.34", "127.0.0.1"],
  "mapped.test": ["::ffff:192.168.0.1"],
  "ula.test": ["fd12:3456::1"],
  "public.test": ["93.184.216.34"],
};
const resolve: HostResolver = async (hostname) => {
  const addresses = NAMES[hostname];
  if (addresses === undefined) throw new Error(`ENOTFOUND ${hostname}`);
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

async function call(tool: Tool, params: Record<string, unknown>) {
  return (await tool.invoke(params, ctx)) as ToolResult<HttpResponseData>;
}

describe("http_request refuses non-public addresses (SSRF)", () => {
  const tool = createHttpRequestTool({ resolve, timeoutMs: 2000 });
  const REFUSED: [url: string, range: string][] = [
    ["http://127.0.0.1/", "loopback"],
    ["http://127.1/", "loopback"],
    ["http://2130706433/", "loopback"],
    ["http://0x7f000001/", "loopback"],
    ["http://0177.0.0.1/", "loopback"],
    ["http://0x7f.0.0.1/", "loopback"],
    ["http://017700000001/", "loopback"],
    ["http://[::1]/", "loopback"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://[::ffff:7f00:1]/", "loopback"],
    ["http://[0:0:0:0:0:ffff:127.0.0.1]/", "loopback"],
    ["http://localhost.test/", "loopback"],
    ["http://10.0.0.1/", "private"],
    ["http://172.16.5.4/", "private"],
    ["http://172.31.255.255/", "private"],
    ["http://192.168.1.1/", "private"],
    ["http://[::ffff:10.0.0.1]/", "private"],
    ["http://internal.test/", "private"],
    ["http://mapped.test/", "private"],
    ["http://100.64.0.1/", "cgnat"],
    ["http://100.127.255.254/", "cgnat"],
    ["http://169.254.169.254/latest/meta-data/", "metadata"],
    ["http://[::ffff:169.254.169.254]/", "metadata"],
    ["http://[::ffff:a9fe:a9fe]/", "metadata"],
    ["http://[64:ff9b::a9fe:a9fe]/", "metadata"],
    ["http://[fd00:ec2::254]/", "metadata"],
    ["http://metadata.test/", "metadata"],
    ["http://169.254.1.1/", "link-local"],
    ["http://[fe80::1]/", "link-local"],
    ["http://[fc00::1]/", "unique-local"],
    ["http://[fd12:3456::1]/", "unique-local"],
    ["http://ula.test/", "unique-local"],
    ["http://0.0.0.0/", "unspecified"],
    ["http://0/", "unspecified"],
    ["http://[::]/", "unspecified"],
    ["http://224.0.0.1/", "multicast"],
    ["http://239.255.255.250/", "multicast"],
    ["http://[ff02::1]/", "multicast"],
    ["http://rebind.test/", "loopback"],
    ["http://255.255.255.255/", "reserved"],
  ];

  it.each(REFUSED)("%s is refused (%s)", async (url, range) => {
    await expect(call(tool, { url })).rejects.toMatchObject({
      code: "tool.permission_denied",
      rule: "network_address_blocked",
      message: expect.stringContaining(`is a ${range} address`),
    });
  });

  it("has at least 20 address forms in its table", () => {
    expect(REFUSED.length).toBeGreaterThanOrEqual(20);
  });

  it.each([
    "file:///etc/passwd",
    "ftp://example.com/",
    "gopher://127.0.0.1/",
    "not a url",
    "http://u:p@public.test/",
  ])("%s is refused before any connection", async (url) => {
    await expect(call(tool, { url })).rejects.toMatchObject({ rule: "network_address_blocked" });
  });

  it("classifies public addresses as public", () => {
    for (const address of [
      "93.184.216.34",
      "8.8.8.8",
      "2606:4700::1111",
      "::ffff:8.8.8.8",
      "172.32.0.1",
      "100.128.0.1",
    ])
      expect(blockedRangeOf(address)).toBeNull();
    expect(blockedRangeOf("not-an-ip")).toBe("reserved");
  });
});

describe("http_request against a local server", () => {
  let server: Server;
  let origin = "";
  const handlers: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    "/hello": (_req, res) => res.end("hello world"),
    "/big": (_req, res) => res.end("x".repeat(10_000)),
    "/echo": (req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => res.end(`${req.method} ${body} ${req.headers.authorization ?? "-"}`));
    },
    "/to-hello": (_req, res) => res.writeHead(302, { location: "/hello" }).end(),
    "/to-metadata": (_req, res) => res.writeHead(302, { location: "http://169.254.169.254/latest/" }).end(),
    "/to-internal": (_req, res) => res.writeHead(301, { location: "http://internal.test/" }).end(),
    "/loop": (_req, res) => res.writeHead(307, { location: "/loop" }).end(),
    "/slow": () => {},
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const handler = handlers[req.url ?? ""];
      if (handler) handler(req, res);
      else res.writeHead(404).end("nope");
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  });

  const allowed = () =>
    createHttpRequestTool({ resolve, allowedHosts: ["127.0.0.1"], timeoutMs: 1000, maxResponseBytes: 1000 });

  it("refuses the loopback server unless allowed_hosts lists it", async () => {
    await expect(call(createHttpRequestTool({ resolve }), { url: `${origin}/hello` })).rejects.toMatchObject({
      rule: "network_address_blocked",
    });
    const result = await call(allowed(), { url: `${origin}/hello` });
    expect(result).toMatchObject({ ok: true, data: { status: 200, body: "hello world", truncated: false } });
  });

  it("sends the method and body; bounds the response", async () => {
    const echoed = await call(allowed(), { url: `${origin}/echo`, method: "POST", body: "payload" });
    expect(echoed.data!.body).toBe("POST payload -");
    const big = await call(allowed(), { url: `${origin}/big` });
    expect(big.data).toMatchObject({ bytes: 1000, truncated: true });
    expect(big.data!.body).toHaveLength(1000);
    expect(big.summary).toContain("truncated");
  });

  it("follows redirects by hand and checks each one", async () => {
    const followed = await call(allowed(), { url: `${origin}/to-hello` });
    expect(followed.data).toMatchObject({ status: 200, body: "hello world", redirects: [`${origin}/hello`] });
    await expect(call(allowed(), { url: `${origin}/to-metadata` })).rejects.toMatchObject({
      rule: "network_address_blocked",
      message: expect.stringContaining("169.254.169.254 is a metadata address"),
    });
    await expect(call(allowed(), { url: `${origin}/to-internal` })).rejects.toMatchObject({
      message: expect.stringContaining("internal.test (resolves to 10.0.0.1) is a private address"),
    });
    await expect(call(allowed(), { url: `${origin}/loop` })).rejects.toThrow(/more than 5 redirects/);
  });

  it("times out", async () => {
    await expect(call(allowed(), { url: `${origin}/slow` })).rejects.toMatchObject({ code: "tool.timeout" });
  });

  it("in a run: off unless enabled, then allowed to the listed host", async () => {
    const script = () =>
      scriptedModel([
        { toolCalls: [{ id: "h", name: "http_request", arguments: { url: `${origin}/hello` } }] },
        { text: "done" },
      ]);
    const tools = [{ id: "http_request", type: "http_request", config: { allowed_hosts: ["127.0.0.1"] } }];
    const offModel = script();
    const off = await Runtime.fromDict({ agents: [{ id: "a", name: "A", llm: offModel, tools }] });
    expect((await off.runDetailed({ agentId: "a", inputText: "x" })).stopReason).toBe("completed");
    const refused = offModel.requests[1]!.messages.at(-1)!;
    expect(JSON.parse(refused.content as string).error).toMatchObject({
      code: "tool.permission_denied",
      message: expect.stringContaining("network_not_enabled"),
    });
    await off.close();

    const onModel = script();
    const on = await Runtime.fromDict({
      agents: [{ id: "a", name: "A", llm: onModel, tools, permissions: { enable: ["network"] } }],
    });
    await on.runDetailed({ agentId: "a", inputText: "x" });
    const answer = JSON.parse(onModel.requests[1]!.messages.at(-1)!.content as string);
    expect(answer).toMatchObject({ ok: true, data: { status: 200, body: "hello world" } });
    await on.close();
  });
});
