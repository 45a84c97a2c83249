import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PermanentToolError, Runtime } from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { runChild } from "./support/child-processes.js";
import { compileForChildren } from "./support/compile-for-children.js";
import { collect } from "./support/harness.js";

/**
 * An `mcp` tool whose server cannot be reached: the run ends `failed` before its loop with a
 * PermanentToolError and a hint — runDetailed() resolves, run() rejects with the typed error, stream() ends with
 * run.finished — in this process and in a child process running Keel's build.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const DEMO = path.join(here, "fixtures/mcp/demo-server.mjs");
const root = mkdtempSync(path.join(tmpdir(), "keel-mcp-unreachable-"));
let closedPort = 0;

beforeAll(async () => {
  // A port that was just free: nothing listens on it.
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closedPort = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** The three ways a server is out of reach, as `mcp` tool configs. */
function unreachable(): Record<string, Record<string, unknown>> {
  return {
    "a command not on PATH": { server: { command: "keel-no-such-mcp-server", stderr: "ignore" } },
    "a server that exits at once": {
      server: { command: process.execPath, args: ["-e", "process.exit(3)"], stderr: "ignore" },
    },
    "a closed port (streamable HTTP)": { server: { url: `http://127.0.0.1:${closedPort}/mcp` } },
  };
}

function agentWith(config: Record<string, unknown>, model = scriptedModel([{ text: "never" }])) {
  return {
    model,
    runtime: Runtime.fromDict({
      agents: [{ id: "a", name: "A", llm: model, tools: [{ id: "srv", type: "mcp", config }] }],
    }),
  };
}

describe("an MCP server that cannot be reached, in process", () => {
  for (const [form, config] of Object.entries(unreachable())) {
    it(`${form}: the run fails before its loop with a PermanentToolError and a hint`, async () => {
      const { model, runtime: starting } = agentWith(config);
      const runtime = await starting;
      try {
        const result = await runtime.runDetailed({ agentId: "a", sessionId: "s1", inputText: "go" });
        expect(result.stopReason).toBe("failed");
        expect(result.exception).toBeInstanceOf(PermanentToolError);
        expect(result.errorDetails).toMatchObject({ code: "tool.permanent", retryable: false });
        expect(result.errorDetails?.hint).toMatch(/Check the server's/);
        expect(result.error).toMatch(/^\[tool:srv\] Could not connect to MCP server/);

        const error = await runtime
          .run({ agentId: "a", sessionId: "s2", inputText: "go" })
          .catch((thrown: unknown) => thrown);
        expect(error).toBeInstanceOf(PermanentToolError);
        expect((error as PermanentToolError).hint).toMatch(/Check the server's/);

        const chunks = await collect(runtime.stream({ agentId: "a", sessionId: "s3", inputText: "go" }));
        const last = chunks.at(-1)!;
        expect(last.kind).toBe("run.finished");
        expect(last.result).toMatchObject({ stopReason: "failed", errorDetails: { code: "tool.permanent" } });
        expect(chunks.find((chunk) => chunk.kind === "tool.preflight")?.payload).toMatchObject({
          toolId: "srv",
          result: "error",
        });
        expect(model.callCount).toBe(0);
        expect((await runtime.getRun(result.runId))?.stopReason).toBe("failed");
      } finally {
        await runtime.close();
      }
    });
  }

  it("a server that answers later: the agent loads again and its next run gets the server's tools", async () => {
    const dir = mkdtempSync(path.join(root, "late-"));
    const command = path.join(dir, "node");
    const model = scriptedModel(
      [
        (request) =>
          request.messages.at(-1)?.role === "tool"
            ? { text: String(request.messages.at(-1)!.content) }
            : { toolCalls: [{ id: "c1", name: "mcp__srv__add", arguments: { a: 2, b: 3 } }] },
      ],
      { whenExhausted: "repeat-last" },
    );
    const { runtime: starting } = agentWith(
      { server: { command, args: [DEMO, "--stdio"], stderr: "ignore" }, tools: ["add"] },
      model,
    );
    const runtime = await starting;
    try {
      const first = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "go" });
      expect(first.stopReason).toBe("failed");
      symlinkSync(process.execPath, command);
      // This run's preflight finds the server answering; the agent it loaded with has no tools of it.
      const second = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "go" });
      expect(second.stopReason).toBe("failed");
      expect(second.error).toMatch(/answers now/);
      const third = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "go" });
      expect(third.stopReason).toBe("completed");
      expect(third.finalOutput).toContain('"text":"5"');
    } finally {
      await runtime.close();
    }
  });
});

describe("an MCP server that cannot be reached, in a child process running Keel's build", () => {
  let buildDir = "";
  beforeAll(() => {
    buildDir = compileForChildren(root);
  }, 120_000);

  for (const form of Object.keys(unreachable())) {
    it(`${form}: runDetailed resolves failed, run() rejects typed, stream() ends with run.finished`, async () => {
      const [out] = await runChild("test/support/mcp-unreachable-child.mjs", buildDir, {
        config: unreachable()[form],
      });
      expect(out).toMatchObject({
        detailed: {
          stopReason: "failed",
          code: "tool.permanent",
          hint: expect.stringMatching(/Check the server's/),
          permanent: true,
        },
        run: { code: "tool.permanent", hint: expect.stringMatching(/Check the server's/), permanent: true },
        stream: { stopReason: "failed", code: "tool.permanent" },
        modelCalls: 0,
      });
      expect((out as { stream: { kinds: string[] } }).stream.kinds.at(-1)).toBe("run.finished");
    }, 60_000);
  }
});
