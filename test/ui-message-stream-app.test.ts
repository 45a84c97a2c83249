import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, Runtime } from "../src/index.js";
import { createUiMessageStreamApp } from "../src/server/ui-message-stream/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { deferred } from "./support/harness.js";
import {
  answerApproval,
  chatPost,
  chatRuntime,
  messageOf,
  readChunks,
  userMessage,
} from "./support/ui-message-client.js";

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

type ToolPart = {
  type: string;
  state: string;
  toolCallId: string;
  input?: unknown;
  output?: unknown;
  approval?: { id: string };
};
const toolParts = (message: UIMessage) =>
  message.parts.filter((part) => part.type.startsWith("tool-")) as ToolPart[];
const textOf = (message: UIMessage) =>
  message.parts.flatMap((part) => (part.type === "text" ? [(part as { text: string }).text] : [])).join("");

describe("the AI SDK UI message stream app", () => {
  it("streams a tool-calling run as chunks the v6 client accepts and builds into one message", async () => {
    runtime = await chatRuntime([
      { toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] },
      { deltas: ["Hel", "lo"] },
    ]);
    const app = createUiMessageStreamApp(runtime, { agentId: "a" });
    const response = await app.fetch(
      chatPost({ id: "chat-1", messages: [userMessage("add 1 and 2")], trigger: "submit-message" }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    const chunks = await readChunks(response);
    expect(chunks.map((chunk) => chunk.type).filter((type) => !type.startsWith("data-"))).toEqual([
      "start",
      "start-step",
      "tool-input-available",
      "tool-output-available",
      "finish-step",
      "start-step",
      "text-start",
      "text-delta",
      "text-delta",
      "text-end",
      "finish-step",
      "finish",
    ]);
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
    const { message, errors } = await messageOf(chunks);
    expect(errors).toEqual([]);
    expect(message.role).toBe("assistant");
    expect(toolParts(message)).toMatchObject([
      { type: "tool-add", state: "output-available", input: { a: 1, b: 2 }, output: 3 },
    ]);
    expect(textOf(message)).toBe("Hello");
    const run = message.parts.find((part) => part.type === "data-keel-run") as {
      data: Record<string, unknown>;
    };
    expect(run.data).toMatchObject({ sessionId: "chat-1", agentId: "a", stopReason: "completed" });
    expect(message.id).toBe(run.data.runId);
  });

  it("keeps the history in the session named by the chat id", async () => {
    const seen: number[] = [];
    runtime = await chatRuntime([
      (request) => {
        seen.push(request.messages.length);
        return { text: "one" };
      },
      (request) => {
        seen.push(request.messages.length);
        return { text: "two" };
      },
    ]);
    const app = createUiMessageStreamApp(runtime);
    await readChunks(await app.fetch(chatPost({ id: "c", messages: [userMessage("first")] }, "/a/chat")));
    await readChunks(
      await app.fetch(
        chatPost({ id: "c", messages: [userMessage("first"), userMessage("second")] }, "/a/chat"),
      ),
    );
    expect(seen[1]).toBeGreaterThan(seen[0]!);
    expect((await runtime.listRuns({ sessionId: "c" })).length).toBe(2);
  });

  it("ends a failed run with an error chunk and an error finish, every part closed", async () => {
    runtime = await chatRuntime([
      { deltas: ["partial"] },
      { error: { type: "response", message: "the model broke" } },
    ]);
    const app = createUiMessageStreamApp(runtime, { agentId: "a" });
    await readChunks(await app.fetch(chatPost({ id: "f", messages: [userMessage("hi")] })));
    const chunks = await readChunks(await app.fetch(chatPost({ id: "f", messages: [userMessage("again")] })));
    const types = chunks.map((chunk) => chunk.type).filter((type) => !type.startsWith("data-"));
    expect(types).toEqual(["start", "start-step", "finish-step", "error", "finish"]);
    expect(chunks).toContainEqual({ type: "error", errorText: "the model broke" });
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "error" });
    const { errors } = await messageOf(chunks);
    expect(errors).toEqual(["the model broke"]);
  });

  it("shows a failed run's error as the app's errorText makes it", async () => {
    runtime = await chatRuntime([{ error: { type: "response", message: "internal host db-7 refused" } }]);
    const app = createUiMessageStreamApp(runtime, {
      agentId: "a",
      errorText: ({ code }) => `Something went wrong (${code})`,
    });
    const chunks = await readChunks(
      await app.fetch(chatPost({ id: "masked", messages: [userMessage("hi")] })),
    );
    expect(chunks).toContainEqual({ type: "error", errorText: "Something went wrong (llm.response)" });
    expect(JSON.stringify(chunks)).not.toContain("db-7");
  });

  it("asks for approval, and the follow-up POST's approval runs the call and finishes the same message", async () => {
    runtime = await chatRuntime([
      { toolCalls: [{ id: "w1", name: "wipe", arguments: { path: "/x" } }] },
      { text: "done" },
    ]);
    const app = createUiMessageStreamApp(runtime, { agentId: "a" });
    const user = userMessage("wipe /x");
    const first = await readChunks(
      await app.fetch(chatPost({ id: "chat-2", messages: [user], trigger: "submit-message" })),
    );
    expect(first.map((chunk) => chunk.type)).toContain("tool-approval-request");
    expect(first.at(-1)).toEqual({ type: "finish", finishReason: "tool-calls" });
    const asked = await messageOf(first);
    expect(asked.errors).toEqual([]);
    const [part] = toolParts(asked.message);
    expect(part).toMatchObject({ type: "tool-wipe", state: "approval-requested", input: { path: "/x" } });
    expect((await runtime.listRuns({ sessionId: "chat-2", status: "waiting" })).length).toBe(1);

    const answered = answerApproval(asked.message, { id: part!.approval!.id, approved: true });
    const response = await app.fetch(
      chatPost({
        id: "chat-2",
        messages: [user, answered],
        trigger: "submit-message",
        messageId: answered.id,
      }),
    );
    expect(response.status).toBe(200);
    const rest = await readChunks(response);
    expect(rest[0]).toEqual({ type: "start", messageId: asked.message.id });
    expect(rest.map((chunk) => chunk.type)).not.toContain("tool-input-available");
    const done = await messageOf(rest, answered);
    expect(done.errors).toEqual([]);
    expect(done.message.id).toBe(asked.message.id);
    expect(toolParts(done.message)).toMatchObject([{ state: "output-available", output: "wiped /x" }]);
    expect(textOf(done.message)).toBe("done");
    expect((await runtime.getRun(done.message.id))?.status).toBe("done");
  });

  it("turns a denial into a denied tool part and lets the run go on", async () => {
    runtime = await chatRuntime([
      { toolCalls: [{ id: "w1", name: "wipe", arguments: { path: "/" } }] },
      { text: "ok, not wiping" },
    ]);
    const app = createUiMessageStreamApp(runtime, { agentId: "a" });
    const user = userMessage("wipe /");
    const asked = await messageOf(await readChunks(await app.fetch(chatPost({ id: "d", messages: [user] }))));
    const [part] = toolParts(asked.message);
    const answered = answerApproval(asked.message, {
      id: part!.approval!.id,
      approved: false,
      reason: "too dangerous",
    });
    const rest = await readChunks(
      await app.fetch(chatPost({ id: "d", messages: [user, answered], messageId: answered.id })),
    );
    expect(rest).toContainEqual({ type: "tool-output-denied", toolCallId: "w1" });
    const done = await messageOf(rest, answered);
    expect(done.errors).toEqual([]);
    expect(toolParts(done.message)).toMatchObject([{ state: "output-denied" }]);
    expect(textOf(done.message)).toBe("ok, not wiping");
  });

  it("decides every answered approval of a step in one POST: one approved, one denied", async () => {
    runtime = await chatRuntime([
      {
        toolCalls: [
          { id: "w1", name: "wipe", arguments: { path: "/a" } },
          { id: "w2", name: "wipe", arguments: { path: "/b" } },
        ],
      },
      { text: "one wiped" },
    ]);
    const app = createUiMessageStreamApp(runtime, { agentId: "a" });
    const user = userMessage("wipe both");
    const asked = await messageOf(
      await readChunks(await app.fetch(chatPost({ id: "two", messages: [user] }))),
    );
    const [first, second] = toolParts(asked.message);
    expect([first?.state, second?.state]).toEqual(["approval-requested", "approval-requested"]);
    const answered = answerApproval(
      answerApproval(asked.message, { id: first!.approval!.id, approved: true }),
      {
        id: second!.approval!.id,
        approved: false,
      },
    );
    const rest = await readChunks(await app.fetch(chatPost({ id: "two", messages: [user, answered] })));
    const done = await messageOf(rest, answered);
    expect(done.errors).toEqual([]);
    expect(toolParts(done.message).map((part) => [part.toolCallId, part.state])).toEqual([
      ["w1", "output-available"],
      ["w2", "output-denied"],
    ]);
    expect(textOf(done.message)).toBe("one wiped");
  });

  it("refuses an approval for another chat's run as unknown, and a repeated answer as a conflict", async () => {
    runtime = await chatRuntime([
      { toolCalls: [{ id: "w1", name: "wipe", arguments: { path: "/x" } }] },
      { text: "done" },
    ]);
    const app = createUiMessageStreamApp(runtime, { agentId: "a" });
    const user = userMessage("wipe");
    const asked = await messageOf(
      await readChunks(await app.fetch(chatPost({ id: "mine", messages: [user] }))),
    );
    const answered = answerApproval(asked.message, {
      id: toolParts(asked.message)[0]!.approval!.id,
      approved: true,
    });
    const stranger = await app.fetch(chatPost({ id: "theirs", messages: [user, answered] }));
    expect(stranger.status).toBe(404);
    const madeUp = answerApproval(asked.message, {
      id: toolParts(asked.message)[0]!.approval!.id,
      approved: true,
    });
    (toolParts(madeUp)[0]!.approval as { id: string }).id = "keel.no-such-run.w1";
    expect((await app.fetch(chatPost({ id: "mine", messages: [user, madeUp] }))).status).toBe(404);
    expect(await stranger.text()).not.toContain("wipe");
    await readChunks(await app.fetch(chatPost({ id: "mine", messages: [user, answered] })));
    const again = await app.fetch(chatPost({ id: "mine", messages: [user, answered] }));
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("run.decision");
  });

  it("sends keep-alive comments while a tool works, which the client's parser skips", async () => {
    const gate = deferred();
    const slow = defineTool({
      name: "slow",
      description: "Waits until the test lets it finish",
      inputSchema: z.object({}),
      execute: async () => {
        await gate.promise;
        return "ok";
      },
    });
    runtime = await chatRuntime(
      [{ toolCalls: [{ id: "s1", name: "slow", arguments: {} }] }, { text: "fine" }],
      [slow],
    );
    const app = createUiMessageStreamApp(runtime, { agentId: "a", keepAliveMs: 1 });
    const response = await app.fetch(chatPost({ id: "k", messages: [userMessage("go")] }));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes(": keep-alive\n\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the stream ended before a keep-alive");
      text += decoder.decode(value, { stream: true });
    }
    gate.resolve();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    const chunks = await readChunks(new Response(text));
    expect(chunks.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
    expect((await messageOf(chunks)).errors).toEqual([]);
  });

  it("keeps a regenerated chat where it goes on across a restart on a SQLite store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "keel-regenerate-"));
    const seen: string[] = [];
    const model = scriptedModel(
      [
        (request) => {
          const said = request.messages.filter((message) => message.role === "assistant");
          seen.push(said.map((message) => message.content).join(" | "));
          return { text: `answer ${seen.length}` };
        },
      ],
      { whenExhausted: "repeat-last" },
    );
    const open = () =>
      Runtime.fromDict({
        session: { type: "sqlite", config: { db_path: join(dir, "keel.db") } },
        agents: [{ id: "a", name: "Agent A", llm: model }],
      } as never);
    try {
      runtime = await open();
      let app = createUiMessageStreamApp(runtime);
      const first = userMessage("first", "u1");
      const answer1 = (
        await messageOf(
          await readChunks(await app.fetch(chatPost({ id: "c", messages: [first] }, "/a/chat"))),
        )
      ).message;
      await readChunks(
        await app.fetch(
          chatPost(
            { id: "c", messages: [first], trigger: "regenerate-message", messageId: answer1.id },
            "/a/chat",
          ),
        ),
      );
      await runtime.close();

      runtime = await open();
      app = createUiMessageStreamApp(runtime);
      await readChunks(
        await app.fetch(chatPost({ id: "c", messages: [first, userMessage("second", "u2")] }, "/a/chat")),
      );
      // The third call's history has the regenerated answer only.
      expect(seen).toEqual(["", "", "answer 2"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keys sessions by what the app's sessionId makes of a chat id, so tenants never share a chat", async () => {
    runtime = await chatRuntime([
      { toolCalls: [{ id: "w1", name: "wipe", arguments: { path: "/x" } }] },
      { text: "done" },
    ]);
    const app = createUiMessageStreamApp(runtime, {
      agentId: "a",
      sessionId: (chatId, c) => `${c.req.header("x-tenant") ?? "anonymous"}/${chatId}`,
    });
    const as = (tenant: string, request: Request) => {
      request.headers.set("x-tenant", tenant);
      return app.fetch(request);
    };
    const user = userMessage("wipe");
    const asked = await messageOf(
      await readChunks(await as("alice", chatPost({ id: "shared", messages: [user] }))),
    );
    expect((await runtime.listRuns({ sessionId: "alice/shared" })).length).toBe(1);
    const answered = answerApproval(asked.message, {
      id: toolParts(asked.message)[0]!.approval!.id,
      approved: true,
    });
    expect((await as("bob", chatPost({ id: "shared", messages: [user, answered] }))).status).toBe(404);
    const rest = await readChunks(await as("alice", chatPost({ id: "shared", messages: [user, answered] })));
    expect(rest.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
  });

  it("answers malformed requests with a 4xx and a JSON error", async () => {
    runtime = await chatRuntime([]);
    const app = createUiMessageStreamApp(runtime);
    const bad = [
      new Request("http://keel.test/a/chat", { method: "POST", body: "{not json" }),
      chatPost({ messages: [userMessage("x")] }, "/a/chat"),
      chatPost({ id: "x".repeat(10_000), messages: [userMessage("x")] }, "/a/chat"),
      chatPost({ id: "c", messages: [] }, "/a/chat"),
      chatPost({ id: "c", messages: [{ id: "m", role: "assistant", parts: [] }] }, "/a/chat"),
      chatPost({ id: "c", messages: [userMessage("x")] }, "/a/chat?profile=v9"),
      chatPost({ id: "c", messages: [userMessage("x")] }, "/nobody/chat"),
      chatPost({ id: "c", messages: [userMessage("x")] }, "/chat"),
    ];
    const statuses = [];
    for (const request of bad) {
      const response = await app.fetch(request);
      statuses.push(response.status);
      const body = (await response.json()) as { error: { message: string; hint: string } };
      expect(body.error.hint).toBeTruthy();
    }
    expect(statuses).toEqual([400, 400, 400, 400, 400, 400, 404, 404]);
  });
});
