import { execFile } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { bundlePackage } from "./support/cli-process.js";
import { FakeModelServer } from "./support/fake-model-server.js";
import { anthropicTurn, chatTurn } from "./support/provider-replies.js";

/** `npm run example`: the quickstart on the mock offline, on Claude or OpenAI when their key is set. */

const run = promisify(execFile);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const example = join(repoRoot, "examples/quickstart/example.mjs");
const INPUT = "Add 2 and 40, then count the words in 'Keel runs agents you can trust'";

/** The environment without any key, plus `extra`; the child must not see a developer's real keys. */
function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  for (const name of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"])
    delete env[name];
  delete env.KEEL_EXAMPLE_PROVIDER;
  return { ...env, ...extra };
}

let server: FakeModelServer;

beforeAll(async () => {
  // The example runs the built CLI; build when dist/ lacks it or it is older than the providers.
  const built = join(repoRoot, "dist/cli/main.js");
  const source = join(repoRoot, "src/models/create-model.ts");
  if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) bundlePackage();
}, 120_000);

beforeEach(async () => {
  server = await FakeModelServer.start();
});

afterEach(async () => {
  await server.close();
});

describe("the quickstart example", () => {
  it("runs offline on the scripted mock when no key is set", async () => {
    const { stdout, stderr } = await run(process.execPath, [example, INPUT], { env: environment({}) });
    expect(stderr).toContain("Running the quickstart on the offline scripted model");
    expect(stdout).toContain("The sum is 42 and the sentence has 6 words.\n");
    expect(stdout).toMatch(/✓ completed · 3 steps · 3 llm calls · 2 tool calls/);
    expect(server.requests).toHaveLength(0);
  });

  it("runs on Claude when ANTHROPIC_API_KEY is set", async () => {
    const usage = { input_tokens: 300, output_tokens: 20 };
    const model = "claude-haiku-4-5";
    server.reply(
      anthropicTurn({
        id: "msg_1",
        model,
        blocks: [{ type: "tool_use", id: "toolu_1", name: "add", input: { a: 2, b: 40 } }],
        stopReason: "tool_use",
        usage,
      }),
      anthropicTurn({
        id: "msg_2",
        model,
        blocks: [
          {
            type: "tool_use",
            id: "toolu_2",
            name: "word_count",
            input: { text: "Keel runs agents you can trust" },
          },
        ],
        stopReason: "tool_use",
        usage,
      }),
      anthropicTurn({
        id: "msg_3",
        model,
        blocks: [{ type: "text", text: "2 + 40 = 42, and the sentence has 6 words." }],
        stopReason: "end_turn",
        usage,
      }),
    );
    const { stdout, stderr } = await run(process.execPath, [example, INPUT], {
      env: environment({ ANTHROPIC_API_KEY: "sk-ant-example", ANTHROPIC_BASE_URL: server.url }),
    });
    expect(stderr).toContain("Running the quickstart on Claude (ANTHROPIC_API_KEY is set)");
    expect(stdout).toContain('→ add {"a":2,"b":40}\n');
    expect(stdout).toMatch(/← add 42 \(/);
    expect(stdout).toMatch(/← word_count 6 \(/);
    expect(stdout).toContain("2 + 40 = 42, and the sentence has 6 words.\n");
    expect(stdout).toMatch(
      /✓ completed · 3 steps · 3 llm calls · 2 tool calls · tokens 900 in \/ 60 out · cost \$/,
    );
    expect(server.requests).toHaveLength(3);
    expect(server.requests[0]?.path).toBe("/v1/messages");
    expect(server.requests[0]?.headers["x-api-key"]).toBe("sk-ant-example");
    expect(server.requests[0]?.body).toMatchObject({ model, max_tokens: 1024, stream: true });
  });

  it("runs on OpenAI (or any server at OPENAI_BASE_URL) when only OPENAI_API_KEY is set", async () => {
    const usage = { prompt_tokens: 200, completion_tokens: 15 };
    const call = (id: string, name: string, args: unknown) => ({
      tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
    });
    server.reply(
      chatTurn({ deltas: [call("call_1", "add", { a: 2, b: 40 })], finish: "tool_calls", usage }),
      chatTurn({
        deltas: [call("call_2", "word_count", { text: "Keel runs agents you can trust" })],
        finish: "tool_calls",
        usage,
      }),
      chatTurn({ deltas: [{ role: "assistant", content: "42, and 6 words." }], finish: "stop", usage }),
    );
    const { stdout, stderr } = await run(process.execPath, [example, INPUT], {
      env: environment({ OPENAI_API_KEY: "sk-oai-example", OPENAI_BASE_URL: `${server.url}/v1` }),
    });
    expect(stderr).toContain("Running the quickstart on OpenAI (OPENAI_API_KEY is set)");
    expect(stdout).toMatch(/← add 42 \(/);
    expect(stdout).toContain("42, and 6 words.\n");
    expect(stdout).toMatch(
      /✓ completed · 3 steps · 3 llm calls · 2 tool calls · tokens 600 in \/ 45 out · cost \$/,
    );
    expect(server.requests[0]?.path).toBe("/v1/chat/completions");
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-oai-example");
    expect(server.requests[0]?.body).toMatchObject({ model: "gpt-4o-mini", max_tokens: 1024 });
  });

  it("lets KEEL_EXAMPLE_PROVIDER force the offline mock, and refuses an unknown one", async () => {
    const { stdout } = await run(process.execPath, [example, INPUT], {
      env: environment({ ANTHROPIC_API_KEY: "sk-ant-example", KEEL_EXAMPLE_PROVIDER: "mock" }),
    });
    expect(stdout).toContain("The sum is 42 and the sentence has 6 words.\n");
    await expect(
      run(process.execPath, [example, INPUT], { env: environment({ KEEL_EXAMPLE_PROVIDER: "gemini" }) }),
    ).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining("KEEL_EXAMPLE_PROVIDER must be one of"),
    });
  });
});
