import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../src/index.js";
import { serveKeel } from "../src/server/index.js";
import { waitFor } from "./support/child-processes.js";
import { startKeel, useBuiltCli, useBuiltConsole } from "./support/cli-process.js";
import { runtimeWith } from "./support/harness.js";

/** Send raw bytes to the server and read what it answers until it closes the connection. */
function rawRequest(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (data: string) => {
      answer += data;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
    socket.write(bytes);
  });
}

function statusAndBody(answer: string): { status: number; body: unknown } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
  const text = answer.slice(answer.indexOf("\r\n\r\n") + 4);
  return { status, body: JSON.parse(text) };
}

describe("serveKeel on a real socket", () => {
  it("refuses to serve beyond loopback without a token, and listens nowhere", async () => {
    const { runtime } = await runtimeWith([]);
    await expect(serveKeel(runtime, { host: "0.0.0.0", port: 0 })).rejects.toBeInstanceOf(ConfigError);
    await runtime.close();
  });

  it("answers an oversized or malformed request head, and a foreign Host, in the API's JSON shape", async () => {
    const { runtime } = await runtimeWith([]);
    const server = await serveKeel(runtime, { port: 0, maxHeaderBytes: 4096 });
    try {
      const huge = await rawRequest(
        server.port,
        `GET /agents HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nX-Big: ${"a".repeat(8192)}\r\n\r\n`,
      );
      expect(statusAndBody(huge)).toMatchObject({
        status: 431,
        body: { error: { code: "request.headers_too_large" } },
      });
      const malformed = await rawRequest(server.port, "NOT HTTP AT ALL\r\n\r\n");
      expect(statusAndBody(malformed)).toMatchObject({
        status: 400,
        body: { error: { code: "request.malformed" } },
      });
      // A page elsewhere reaching the loopback server through a rebound name is refused.
      const rebound = await rawRequest(
        server.port,
        "GET /agents HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
      );
      expect(statusAndBody(rebound)).toMatchObject({
        status: 403,
        body: { error: { code: "request.host" } },
      });
      const agents = await fetch(`${server.url}/agents`);
      expect(agents.status).toBe(200);
    } finally {
      await server.close();
      await runtime.close();
    }
  });

  it("answers a client that never finishes its request head with 408 and closes the connection", async () => {
    const { runtime } = await runtimeWith([]);
    const server = await serveKeel(runtime, { port: 0, headersTimeoutMs: 200, timeoutCheckIntervalMs: 50 });
    try {
      // A slow-loris client: the request line and one header, then nothing, the blank line never sent.
      const answer = await rawRequest(
        server.port,
        `GET /agents HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n`,
      );
      expect(answer.startsWith("HTTP/1.1 408 Request Timeout\r\n")).toBe(true);
      expect(statusAndBody(answer)).toMatchObject({
        status: 408,
        body: { error: { code: "request.timeout" } },
      });
      // The server still answers everyone else.
      expect((await fetch(`${server.url}/agents`)).status).toBe(200);
    } finally {
      await server.close();
      await runtime.close();
    }
  });

  it("answers a client whose body never finishes arriving with 408 and closes the connection", async () => {
    const { runtime } = await runtimeWith([]);
    const server = await serveKeel(runtime, {
      port: 0,
      headersTimeoutMs: 100,
      requestTimeoutMs: 300,
      timeoutCheckIntervalMs: 50,
    });
    try {
      const head = `POST /runs HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n`;
      const answer = await rawRequest(server.port, `${head}{"agentId": "a",`);
      expect(statusAndBody(answer)).toMatchObject({
        status: 408,
        body: { error: { code: "request.timeout" } },
      });
    } finally {
      await server.close();
      await runtime.close();
    }
  });

  it("refuses a header timeout longer than the request timeout", async () => {
    const { runtime } = await runtimeWith([]);
    await expect(
      serveKeel(runtime, { port: 0, headersTimeoutMs: 5000, requestTimeoutMs: 1000 }),
    ).rejects.toBeInstanceOf(ConfigError);
    await runtime.close();
  });
});

describe("keel serve", () => {
  useBuiltCli();
  useBuiltConsole();
  const dir = mkdtempSync(join(tmpdir(), "keel-serve-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("stops on Ctrl-C: the server closes and the process exits 130, as the shell expects", async () => {
    const config = join(dir, "agent.json");
    writeFileSync(config, JSON.stringify({ agents: [{ id: "echo", name: "Echo" }] }));
    const child = startKeel(["serve", config, "--port", "0"]);
    try {
      await waitFor(
        () => /at (http:\S+)/.test(child.stdout) || child.code !== undefined,
        () => `the server to listen; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
      );
      const url = /at (http:\S+)/.exec(child.stdout)![1]!;
      const answer = await fetch(`${url}/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ agentId: "echo", inputText: "hi", wait: true }),
      });
      expect(await answer.json()).toMatchObject({
        stopReason: "completed",
        finalOutput: "Echo: hi (history=0)",
      });
      // The web console is at the root unless --no-console.
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(child.stdout).toContain(`Console: ${url}/`);
      child.kill("SIGINT");
      await child.done;
      expect(child.code).toBe(130);
      await expect(fetch(`${url}/agents`)).rejects.toThrow();
    } finally {
      if (child.code === undefined) child.kill("SIGKILL");
    }
  }, 30_000);

  it("serves no console with --no-console", async () => {
    const config = join(dir, "agent.json");
    writeFileSync(config, JSON.stringify({ agents: [{ id: "echo", name: "Echo" }] }));
    const child = startKeel(["serve", config, "--port", "0", "--no-console"]);
    try {
      await waitFor(
        () => /at (http:\S+)/.test(child.stdout) || child.code !== undefined,
        () => `the server to listen; stdout:\n${child.stdout}\nstderr:\n${child.stderr}`,
      );
      const url = /at (http:\S+)/.exec(child.stdout)![1]!;
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(404);
      expect(await page.json()).toMatchObject({ error: { code: "route.unknown" } });
      expect(child.stdout).not.toContain("Console:");
    } finally {
      child.kill("SIGKILL");
      await child.done;
    }
  }, 30_000);
});
